/// Instagram's legacy v1 API under `/instagram/v1` (a client's base URL is `<baseURL>/instagram/v1`),
/// answered from the 2011 recordings in `../shared/fixtures/instagram/`.
///
/// - `GET users/self`, `users/{id}`: the token's user (id "20", shayne) or mikeyk (id "4")
/// - `GET users/{id}/followed-by`, `users/{id}/follows`: user 20's 50 users, pages of `count`, `cursor`
/// - `GET users/{id}/media/recent`: user 20's 41 media, pages of `count`, `max_id`
/// - `GET media/{id}`, `GET users/search?q=`
///
/// Every endpoint needs `access_token` (see ``InstagramEnvelope/refusal(for:)``).
struct InstagramRoutes: RouteHandler {
    static let prefix = "/instagram/v1"

    /// What a request asks for, before the token is checked.
    private enum Endpoint {
        case search
        case user(String)
        case people(String, followers: Bool)
        case recentMedia(String)
        case media(String)
    }

    func respond(to request: RouteRequest) -> Response? {
        guard let endpoint = endpoint(of: request) else { return nil }
        if let refusal = InstagramEnvelope.refusal(for: request) { return refusal }
        do {
            switch endpoint {
            case .search: return try search(request)
            case .user(let id): return try user(id)
            case .people(let id, let followers): return try people(id, followers: followers, request: request)
            case .recentMedia(let id): return try recentMedia(id, request: request)
            case .media(let id): return try media(id)
            }
        } catch {
            return .message("fixture unavailable: \(error)", status: 500)
        }
    }

    private func endpoint(of request: RouteRequest) -> Endpoint? {
        let prefix = InstagramRoutes.prefix
        if request.match("GET", prefix + "/users/search") != nil { return .search }
        if let id = request.match("GET", prefix + "/users/{id}")?["id"] { return .user(id) }
        if let captures = request.match("GET", prefix + "/users/{id}/{list}"), let id = captures["id"] {
            switch captures["list"] {
            case "followed-by": return .people(id, followers: true)
            case "follows": return .people(id, followers: false)
            default: return nil
            }
        }
        if let id = request.match("GET", prefix + "/users/{id}/media/recent")?["id"] { return .recentMedia(id) }
        if let id = request.match("GET", prefix + "/media/{id}")?["id"] { return .media(id) }
        return nil
    }

    // MARK: users

    private func user(_ id: String) throws -> Response {
        guard let account = try InstagramAccount.named(id) else { return InstagramEnvelope.unknownUser }
        return InstagramEnvelope.success(account.profile)
    }

    private func search(_ request: RouteRequest) throws -> Response {
        var users = try InstagramFixtures.list("user_search.json")
        let query = (request.query["q"] ?? "").lowercased()
        if !query.isEmpty {
            users = users.filter { user in
                ["username", "first_name", "last_name"].contains { key in
                    user[key]?.stringValue?.lowercased().contains(query) ?? false
                }
            }
        }
        if let count = request.queryInt("count"), count > 0 { users = Array(users.prefix(count)) }
        return InstagramEnvelope.success(.array(users), pagination: .object([]))
    }

    private func people(_ id: String, followers: Bool, request: RouteRequest) throws -> Response {
        guard let account = try InstagramAccount.named(id) else { return InstagramEnvelope.unknownUser }
        let users = followers ? account.followedBy : account.follows
        let count = InstagramEnvelope.pageSize(request)
        var start = 0
        if let cursor = request.query["cursor"] {
            guard let offset = Int(cursor), offset >= 0 else { return InstagramEnvelope.invalidParameter("cursor") }
            start = min(offset, users.count)
        }
        let end = min(users.count, start + count)
        var pagination: [(String, JSON)] = []
        if end < users.count {
            let cursor = String(end)
            pagination = [
                (
                    "next_url",
                    .string(InstagramEnvelope.nextURL(for: request, count: count, parameter: "cursor", value: cursor))
                ),
                ("next_cursor", .string(cursor)),
            ]
        }
        return InstagramEnvelope.success(.array(Array(users[start..<end])), pagination: .object(pagination))
    }

    // MARK: media

    /// A page of the user's media.
    ///
    /// `max_id` is the id of the last media of the previous page (as the recording's own next
    /// link used it): the page starts right after that media.
    private func recentMedia(_ id: String, request: RouteRequest) throws -> Response {
        guard let account = try InstagramAccount.named(id) else { return InstagramEnvelope.unknownUser }
        let media = account.media
        let count = InstagramEnvelope.pageSize(request)
        var start = 0
        if let maxID = request.query["max_id"] {
            let position = media.firstIndex { InstagramFixtures.idText($0["id"]) == maxID }
            start = position.map { $0 + 1 } ?? media.count
        }
        let end = min(media.count, start + count)
        var pagination: [(String, JSON)] = []
        if end < media.count, let lastID = InstagramFixtures.idText(media[end - 1]["id"]) {
            pagination = [
                (
                    "next_url",
                    .string(InstagramEnvelope.nextURL(for: request, count: count, parameter: "max_id", value: lastID))
                ),
                ("next_max_id", .string(lastID)),
            ]
        }
        let page = media[start..<end].map(InstagramFixtures.served(media:))
        return InstagramEnvelope.success(.array(page), pagination: .object(pagination))
    }

    /// `media.json`'s object, or any media of a user's recent list, by id.
    private func media(_ id: String) throws -> Response {
        let candidates = [try InstagramFixtures.data("media.json")] + (try InstagramAccount.shayne().media)
        guard let found = candidates.first(where: { InstagramFixtures.idText($0["id"]) == id }) else {
            return InstagramEnvelope.unknownMedia
        }
        return InstagramEnvelope.success(InstagramFixtures.served(media: found))
    }
}

/// A user of the recordings' world, with the lists the server holds for it.
struct InstagramAccount {
    /// The v1 user object (`users/{id}`).
    let profile: JSON
    let followedBy: [JSON]
    let follows: [JSON]
    let media: [JSON]

    /// The account for an id in a path: `self` and "20" are shayne (every valid token's user),
    /// "4" is mikeyk; nil for anyone else.
    static func named(_ id: String) throws -> InstagramAccount? {
        switch id {
        case "self", "20": return try shayne()
        case "4": return try mikeyk()
        default: return nil
        }
    }

    /// User 20: the followers, followings and recent media were recorded for this user; the
    /// media list is `recent_media.json`'s 20 followed by `user_media_feed.json`'s 21.
    static func shayne() throws -> InstagramAccount {
        let followedBy = try InstagramFixtures.list("followed_by.json")
        let follows = try InstagramFixtures.list("follows.json")
        let media = try InstagramFixtures.list("recent_media.json") + InstagramFixtures.list("user_media_feed.json")
        let picture = media.first?["user"]?["profile_picture"]?.stringValue ?? ""
        let profile = try InstagramFixtures.data("mikeyk.json")
            .setting("username", .string("shayne"))
            .setting("first_name", .string("Shayne"))
            .setting("profile_picture", .string(picture))
            .setting("id", .string("20"))
            .setting("last_name", .string("Sweeney"))
        return InstagramAccount(
            profile: complete(
                profile, fullName: "Shayne Sweeney", media: media.count, follows: follows.count,
                followedBy: followedBy.count),
            followedBy: followedBy, follows: follows, media: media)
    }

    /// User 4 as recorded in `mikeyk.json`; its only media is `media.json`'s, and it has no lists.
    static func mikeyk() throws -> InstagramAccount {
        let media = [try InstagramFixtures.data("media.json")]
        let profile = try InstagramFixtures.data("mikeyk.json").setting("id", .string("4"))
        return InstagramAccount(
            profile: complete(profile, fullName: "Mike Krieger", media: media.count, follows: 0, followedBy: 0),
            followedBy: [], follows: [], media: media)
    }

    /// Adds the v1 keys the 2011 user shape lacks; ids are strings as in v1.
    private static func complete(
        _ profile: JSON, fullName: String, media: Int, follows: Int, followedBy: Int
    ) -> JSON {
        profile
            .setting("full_name", .string(fullName))
            .setting("bio", .string(""))
            .setting("website", .string(""))
            .setting(
                "counts",
                .object([("media", .int(media)), ("follows", .int(follows)), ("followed_by", .int(followedBy))]))
    }
}
