/// The account the Graph routes serve, built from the recordings in
/// `../shared/fixtures/instagram-graph/` (sns-sdks/python-facebook's testdata; the fixtures'
/// README names each source).
///
/// Where a field or an answer was not recorded, it is the shape Meta documents, marked as
/// such beside it.
enum InstagramGraphWorld {
    /// The account's id: ikroskun's, whose media were recorded (pyfb-basic-user-user_info.json,
    /// and the `paging.next` of pyfb-graph-users-medias_p1.json names it).
    static let accountID = "17841406338772941"

    /// The parsed recording `instagram-graph/<name>`.
    static func recorded(_ name: String) throws -> JSON {
        try InstagramFixtures.document(at: "instagram-graph/" + name)
    }

    /// `/me`: the professional account of pyfb-graph-users-user_fields.json (`biography`, `id`,
    /// `name`, `username`, `profile_picture_url`, `followers_count`, `media_count`) under the
    /// recorded account's id, with `account_type` as pyfb-basic-user-user_info.json records it,
    /// and — not recorded, the shape of Meta's "Instagram User" reference — `user_id` (the
    /// same id) and `follows_count`.
    static func account() throws -> JSON {
        let type = try recorded("pyfb-basic-user-user_info.json")["account_type"] ?? .string("BUSINESS")
        return try recorded("pyfb-graph-users-user_fields.json")
            .setting("id", .string(accountID))
            .setting("account_type", type)
            .setting("user_id", .string(accountID))  // documented shape, not recorded
            .setting("follows_count", .int(81))  // documented shape, not recorded
    }

    /// The account's media, newest first: pyfb-graph-users-medias_p1.json and _p2.json (with
    /// `like_count` and `comments_count`, a carousel with its `children`), then the Basic
    /// Display recordings of the same account (pyfb-basic-user-user_medias_p1.json, _p2.json,
    /// and the carousel of pyfb-basic-media-media_info.json), which carry no counts.
    static func media() throws -> [JSON] {
        var all: [JSON] = []
        for name in [
            "pyfb-graph-users-medias_p1.json", "pyfb-graph-users-medias_p2.json", "pyfb-basic-user-user_medias_p1.json",
            "pyfb-basic-user-user_medias_p2.json",
        ] {
            all += try recorded(name)["data"]?.arrayValue ?? []
        }
        all.append(try recorded("pyfb-basic-media-media_info.json"))
        return all.sorted { ($0["timestamp"]?.stringValue ?? "") > ($1["timestamp"]?.stringValue ?? "") }
    }

    /// A carousel's items: the album of pyfb-graph-users-medias_p2.json keeps them in its
    /// `children`; pyfb-basic-media-media_children.json holds the Basic Display carousel's.
    ///
    /// Any other media has none (an empty `data`).
    static func children(of id: String) throws -> [JSON]? {
        if id == "18027939643230671" {
            return try recorded("pyfb-basic-media-media_children.json")["data"]?.arrayValue ?? []
        }
        guard let media = try media().first(where: { $0["id"]?.stringValue == id }) else { return nil }
        return media["children"]?["data"]?.arrayValue ?? []
    }

    /// The insights of `metric` for the account (pyfb-graph-users-user_insights_new.json:
    /// `reach`) or a media (pyfb-graph-medias-insights_new.json: `profile_activity`), as
    /// recorded; nil for any other metric.
    static func insights(metric: String, ofAccount: Bool) throws -> JSON? {
        switch (metric, ofAccount) {
        case ("reach", true): return try recorded("pyfb-graph-users-user_insights_new.json")
        case ("profile_activity", false): return try recorded("pyfb-graph-medias-insights_new.json")
        default: return nil
        }
    }

    /// The recorded Graph error envelope of an object that does not exist
    /// (pyfb-base-error_data.json: code 100).
    static func unknownObject() throws -> Response {
        .json(try recorded("pyfb-base-error_data.json"), status: 400)
    }

    /// A Graph error envelope `{"error": {message, type, code, error_subcode, is_transient,
    /// fbtrace_id}}`: the shape of pyfb-error.json, with the members Meta's "Handle errors"
    /// page documents.
    static func error(
        _ message: String, code: Int, subcode: Int? = nil, type: String = "OAuthException", transient: Bool? = nil,
        status: Int = 400, headers: [(String, String)] = []
    ) -> Response {
        var fields: [(String, JSON)] = [("message", .string(message)), ("type", .string(type)), ("code", .int(code))]
        if let subcode { fields.append(("error_subcode", .int(subcode))) }
        if let transient { fields.append(("is_transient", .bool(transient))) }
        fields.append(("fbtrace_id", .string("AQt_hJ68vFybS4TnupatNtX")))
        return .json(.object([("error", .object(fields))]), status: status, headers: headers)
    }

    /// The long-lived token answer of pyfb-base-long_term_token.json (`access_token`,
    /// `token_type`, `expires_in`: 60 days), with `token`.
    static func longLived(_ token: String) throws -> Response {
        .json(try recorded("pyfb-base-long_term_token.json").setting("access_token", .string(token)))
    }
}
