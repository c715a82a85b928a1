import Foundation
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

    /// The first request of `links(limit=...)`: the group's first page when the group is known,
    /// else `user`, whose answer names it (`group(in:)`).
    public static func firstLinksPage(group: String?, limit: Int?) -> Request {
        let size = min(pageSize, max(1, limit ?? pageSize))
        return (group.map { BitlyRouter.links(group: $0, size: size) } ?? .user).request
    }

    /// Whether `request` is the `user` lookup that starts a listing.
    public static func isUserLookup(_ request: Request) -> Bool {
        request.method == "GET" && request.target == BitlyRouter.user.request.target
    }
}

/// The JSON bodies the shortener sends: string fields (nil ones left out) and lists of strings,
/// keys in sorted order so a recording matches the same call again.
enum ShortenerJSON {
    static func body(_ fields: [(String, String?)], lists: [(String, [String])] = [], flags: [(String, Bool)] = [])
        -> Request.Body
    {
        var object: [String: Any] = [:]
        for (key, value) in fields { if let value { object[key] = value } }
        for (key, values) in lists { object[key] = values }
        for (key, flag) in flags { object[key] = flag }
        let data =
            (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]))
            ?? Data("{}".utf8)
        return .json(Array(data))
    }
}
