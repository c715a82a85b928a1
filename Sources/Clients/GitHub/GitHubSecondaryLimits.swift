import Platform
public import WebAPI

/// GitHub's secondary rate limits, the numbers GitHub documents, which apimacro paces itself to
/// by default (`SecondaryPacer`, per token, per process) and the answers that say one was hit.
///
/// From GitHub's REST docs, "Rate limits for the REST API", "About secondary rate limits"
/// (https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api#about-secondary-rate-limits):
/// no more than 100 concurrent requests (REST and GraphQL together); no more than 900 points a
/// minute per REST endpoint and 2,000 for the GraphQL endpoint, where a GET, HEAD or OPTIONS
/// or a GraphQL query costs 1 point and a POST, PATCH, PUT or DELETE or a GraphQL mutation 5
/// ("Calculating points for the secondary rate limit"); generally no more than 80
/// content-generating requests a minute and 500 an hour. On hitting one: "If the retry-after
/// response header is present, you should not retry your request until after that many
/// seconds has elapsed. … Otherwise, wait for at least one minute before retrying" ("Exceeding
/// the rate limit"). From "Best practices for using the REST API", "Pause between mutative
/// requests" (https://docs.github.com/rest/using-the-rest-api/best-practices-for-using-the-rest-api):
/// "If you are making a large number of POST, PATCH, PUT, or DELETE requests for a single user
/// or client ID, wait at least one second between each request." GitHub adds that the limits
/// may change without notice; the CPU-time limit (90 s of CPU a minute) cannot be paced from
/// outside and is not.
public enum GitHubSecondaryLimits {
    /// The rules.
    public static let limits = SecondaryLimits(
        maxInFlight: 100, writeGap: 1,
        contentCreation: [
            SecondaryLimits.Window(requests: 80, seconds: 60), SecondaryLimits.Window(requests: 500, seconds: 3600),
        ],
        defaultWait: 60, isMutating: isMutating, createsContent: createsContent, cost: cost, recognizes: recognizes)

    /// The most points a minute per REST endpoint, and for the GraphQL endpoint.
    static let restPointsPerMinute = 900
    static let graphQLPointsPerMinute = 2000

    /// A REST write (POST, PATCH, PUT, DELETE) or a GraphQL mutation.
    @Sendable static func isMutating(_ exchange: Exchange) -> Bool {
        isGraphQL(exchange) ? isMutation(exchange.body) : !["GET", "HEAD", "OPTIONS"].contains(exchange.method)
    }

    /// A REST POST or a GraphQL mutation: what GitHub counts as content-generating.
    @Sendable static func createsContent(_ exchange: Exchange) -> Bool {
        isGraphQL(exchange) ? isMutation(exchange.body) : exchange.method == "POST"
    }

    /// 1 point for a read or a GraphQL query, 5 for a write or a mutation, against the
    /// endpoint's budget: the GraphQL endpoint's, or the REST path's (`template`).
    @Sendable static func cost(_ exchange: Exchange) -> SecondaryLimits.Cost? {
        if isGraphQL(exchange) {
            return SecondaryLimits.Cost(
                endpoint: "graphql", points: isMutation(exchange.body) ? 5 : 1, perMinute: graphQLPointsPerMinute)
        }
        let points = ["GET", "HEAD", "OPTIONS"].contains(exchange.method) ? 1 : 5
        return SecondaryLimits.Cost(
            endpoint: exchange.method + " " + template(exchange.url), points: points, perMinute: restPointsPerMinute)
    }

    /// GitHub's answer to a request past a secondary limit: a 403 or 429 whose message says so
    /// ("You have exceeded a secondary rate limit…", formerly "You have triggered an abuse
    /// detection mechanism…").
    @Sendable static func recognizes(_ response: Response) -> Bool {
        guard response.status == 403 || response.status == 429,
            let message = JSONPath.string(in: response.body, path: ["message"])?.lowercased()
        else { return false }
        return message.contains("secondary rate limit") || message.contains("abuse detection")
    }

    /// Whether `exchange` goes to the GraphQL endpoint (`…/graphql`, GHES `…/api/graphql`).
    static func isGraphQL(_ exchange: Exchange) -> Bool {
        exchange.method == "POST" && path(of: exchange.url).split(separator: "/").last == "graphql"
    }

    /// Whether a GraphQL request's body holds a mutation (its `query` begins with `mutation`,
    /// after blanks and comments).
    static func isMutation(_ body: [UInt8]) -> Bool {
        guard let query = JSONPath.string(in: body, path: ["query"]) else { return false }
        var rest = Substring(query)
        while true {
            rest = rest.drop { $0.isWhitespace || $0 == "," }
            guard rest.hasPrefix("#") else { break }
            rest = rest.drop { $0 != "\n" }
        }
        return rest.hasPrefix("mutation")
    }

    /// The path of `url`, without scheme, host, query or fragment.
    static func path(of url: String) -> Substring {
        var rest = Substring(url)
        if let scheme = rest.firstRange(of: "://") { rest = rest[scheme.upperBound...] }
        rest = rest.drop { $0 != "/" }
        return rest.prefix { $0 != "?" && $0 != "#" }
    }

    /// A REST path as an endpoint: a segment with a digit, or the name after `repos` (two),
    /// `users`, `orgs` or `enterprises`, is a parameter (`/repos/{}/{}/issues/{}/comments`),
    /// so requests to one endpoint for different repositories or numbers share its budget.
    static func template(_ url: String) -> String {
        var segments: [String] = []
        var parameters = 0
        for segment in path(of: url).split(separator: "/").prefix(32) {
            if parameters > 0 || segment.contains(where: \.isNumber) {
                segments.append("{}")
                parameters = max(0, parameters - 1)
                continue
            }
            segments.append(String(segment.prefix(64)))
            switch segment {
            case "repos": parameters = 2
            case "users", "orgs", "enterprises": parameters = 1
            default: parameters = 0
            }
        }
        return "/" + segments.joined(separator: "/")
    }
}
