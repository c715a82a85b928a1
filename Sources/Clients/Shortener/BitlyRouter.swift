import Platform
public import WebAPI

/// The Bitly API v4 endpoints the shortener uses, one case each (https://dev.bitly.com/api-reference).
public enum BitlyRouter: Sendable {
    /// `POST /shorten` `{"long_url", "domain"?, "group_guid"?}`: the link for a long URL, the
    /// existing one when the account has it (200) or a new one (201).
    case shorten(longURL: String, domain: String?, group: String?)
    /// `POST /bitlinks` with `keyword` (the custom back-half) and `tags`: what `shorten` cannot set.
    case create(longURL: String, domain: String?, group: String?, keyword: String?, tags: [String])
    /// `POST /expand` `{"bitlink_id"}`: a link's public facts.
    case expand(ShortLinkAddress)
    /// `GET /user`: the account, whose `default_group_guid` `links` lists when no group is set.
    case user
    /// `GET /groups/{group}/bitlinks?size=N`: the first page of a group's links; the next is at
    /// `pagination.next` (a full URL; empty on the last page).
    case links(group: String, size: Int)
    /// `GET /bitlinks/{bitlink}/clicks/summary?unit=day&units=-1`: every click, all time.
    case clicks(ShortLinkAddress)
    /// `GET /user/platform_limits`: each endpoint's hourly limit per method, and its count.
    case platformLimits
    /// `GET /groups/{group_guid}`: a group, whose `organization_guid` names its organization.
    case group(String)
    /// `GET /organizations/{organization_guid}/plan_limits`: the plan's monthly limits and counts.
    case planLimits(organization: String)

    /// The most links a page asks for (Bitly's default page size).
    public static let pageSize = 50

    /// Where a page of `links` keeps its links.
    public static let itemsPath = ["links"]
    /// The next page's URL in a page of `links` (empty at the end).
    public static let nextPath = ["pagination", "next"]
    /// The group `user` names.
    public static let groupPath = ["default_group_guid"]
    /// How `links` pages: `pagination.next`, the links in `links`.
    public static let paging: Paging = Paging(.nextURL(path: nextPath), items: itemsPath)

    /// The request for this endpoint; bitlinks go in the path as two escaped segments.
    public var request: Request {
        switch self {
        case .shorten(let longURL, let domain, let group):
            Request(
                "POST", "/shorten",
                body: ShortenerJSON.body([("long_url", longURL), ("domain", domain), ("group_guid", group)]))
        case .create(let longURL, let domain, let group, let keyword, let tags):
            Request(
                "POST", "/bitlinks",
                body: ShortenerJSON.body(
                    [("long_url", longURL), ("domain", domain), ("group_guid", group), ("keyword", keyword)],
                    lists: tags.isEmpty ? [] : [("tags", tags)]))
        case .expand(let address):
            Request("POST", "/expand", body: ShortenerJSON.body([("bitlink_id", address.bitlink)]))
        case .user:
            Request("GET", "/user")
        case .links(let group, let size):
            Request("GET", "/groups/\(FormEncoding.pathSegment(group))/bitlinks", query: [("size", String(size))])
        case .clicks(let address):
            Request(
                "GET",
                "/bitlinks/\(FormEncoding.pathSegment(address.host))/\(FormEncoding.pathSegment(address.code))/clicks/summary",
                query: [("unit", "day"), ("units", "-1")])
        case .platformLimits:
            Request("GET", "/user/platform_limits")
        case .group(let guid):
            Request("GET", "/groups/\(FormEncoding.pathSegment(guid))")
        case .planLimits(let organization):
            Request("GET", "/organizations/\(FormEncoding.pathSegment(organization))/plan_limits")
        }
    }

    /// The start of `links(limit=...)`: the group's first page when the group is known, else
    /// `user`, whose answer names the account's default group.
    public static func linksStart(group: String?, limit: Int?) -> LinksStart {
        let size = min(pageSize, max(1, limit ?? pageSize))
        if let group { return LinksStart(BitlyRouter.links(group: group, size: size).request) }
        return LinksStart(
            BitlyRouter.user.request, lookingUp: groupPath, what: "the account's default_group_guid"
        ) { group in BitlyRouter.links(group: group, size: size).request }
    }
}

extension BitlyRouter: ShortenerService {
    public static let name = "bitly"
    public static let title = "Bitly"
    public static let defaultBaseURL: String? = "https://api-ssl.bitly.com/v4"
    public static let credentialKind = ShortenerCredentialKind.token
    public static let credentialName = "a Bitly access token"
    /// `Authorization: Bearer`.
    public static func credential(_ secret: Secret) -> Credential { .bearer(secret) }
    /// Bitly allows five concurrent connections per address (and sends no rate-limit headers).
    public static let defaultMaxConcurrency: Int? = 5

    /// Bitly's `id` is the bitlink without a scheme (`bit.ly/2WujBe0`); its links are served
    /// over https, whatever the `link` field of an old answer says.
    public static let shape = ShortLinkShape(
        id: [["id"]], idIsBitlink: true, longURL: [["long_url"]], createdAt: [["created_at"]],
        clicks: [["total_clicks"]])

    /// `/shorten`, or `/bitlinks` for a slug or tags (what `/shorten` cannot set).
    public static func shorten(_ link: NewShortLink, in configuration: ShortenerConfiguration) throws -> Request {
        guard link.slug != nil || !link.tags.isEmpty else {
            return BitlyRouter.shorten(longURL: link.longURL, domain: link.domain, group: configuration.group).request
        }
        return BitlyRouter.create(
            longURL: link.longURL, domain: link.domain, group: configuration.group, keyword: link.slug, tags: link.tags
        ).request
    }

    public static func expand(_ shortURL: String, argument: String, in configuration: ShortenerConfiguration)
        throws -> Request
    {
        BitlyRouter.expand(try ShortLinkAddress(shortURL, argument: argument)).request
    }

    /// The click summary over all time.
    public static func clicks(_ shortURL: String, argument: String, in configuration: ShortenerConfiguration)
        throws -> Request
    {
        BitlyRouter.clicks(try ShortLinkAddress(shortURL, argument: argument)).request
    }

    public static func linksStart(limit: Int?, in configuration: ShortenerConfiguration) throws -> LinksStart {
        linksStart(group: configuration.group, limit: limit)
    }

    /// `{"message": CODE, "description": …, "errors": [{"field", "error_code"}]}` reads
    /// `CODE: description (field long_url: invalid)`.
    public static func errorMessage(_ response: Response) -> String? {
        guard let object = JSONValue.native(in: response.body, path: []) as? [String: Any] else { return nil }
        let code = object["message"] as? String
        let description = object["description"] as? String
        var text = [code, description].compactMap { $0 }.joined(separator: ": ")
        let fields = (object["errors"] as? [Any] ?? []).compactMap { item -> String? in
            guard let entry = item as? [String: Any], let field = entry["field"] as? String else { return nil }
            return "field \(field)" + ((entry["error_code"] as? String).map { ": \($0)" } ?? "")
        }
        if !fields.isEmpty { text += (text.isEmpty ? "" : " ") + "(\(fields.joined(separator: "; ")))" }
        return text.isEmpty ? nil : text
    }

    /// Bitly's `message` is a code: FORBIDDEN (a bad token, a resource the token may not
    /// touch), NOT_FOUND, RATE_LIMIT_EXCEEDED.
    public static func errorKind(_ response: Response) -> APIError.Kind? {
        switch JSONPath.string(in: response.body, path: ["message"]) {
        case "FORBIDDEN": .forbidden
        case "NOT_FOUND": .notFound
        default: nil
        }
    }

    /// `GET /user` names the account (its login).
    public static let identity: IdentityCheck? = IdentityCheck(BitlyRouter.user.request) { response in
        Identity(
            account: JSONPath.string(in: response.body, path: ["login"])
                ?? JSONPath.string(in: response.body, path: ["name"]) ?? "an account Bitly did not name")
    }
}

/// The JSON bodies the shortener sends: string fields (nil ones left out) and lists of strings,
/// keys in sorted order so a recording matches the same call again.
enum ShortenerJSON {
    static func body(_ fields: [(String, String?)], lists: [(String, [String])] = [], flags: [(String, Bool)] = [])
        -> Request.Body
    {
        var object: [String: JSONValue] = [:]
        for (key, value) in fields { if let value { object[key] = .string(value) } }
        for (key, values) in lists { object[key] = .array(values.map(JSONValue.string)) }
        for (key, flag) in flags { object[key] = .bool(flag) }
        let data = JSONValue.object(object).encoded([.sortedKeys, .withoutEscapingSlashes]) ?? Data("{}".utf8)
        return .json(Array(data))
    }
}
