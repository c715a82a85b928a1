import Foundation
import Synchronization

/// `POST /graphql` (api.github.com's layout) and `POST /api/graphql` (GitHub Enterprise Server's),
/// answered from recorded GitHub GraphQL responses (`GraphQLFixtures`).
///
/// No GraphQL engine: the query is matched by its root field and connection, and the answer has
/// the recorded shape whatever fields were selected.
///
/// - `repository(owner, name) { issues(first, after) }` for `octokit-fixture-org/paginate-issues`:
///   octokit's 13 recorded open issues, `first` per page, opaque `Y3Vyc29yOnYy…` cursors.
/// - `repository(owner, name) { … history(first, after) }` for `TimonVS/release-drafter-test-repo`:
///   release-drafter's 16 recorded commits, cursors in the recorded `<sha> <index>` form.
/// - any other repository: the recorded NOT_FOUND answer (`data.repository: null` and `errors`),
///   naming the repository asked for.
/// - `echoToken` (hostile): `errors` whose message, and a field of whose `extensions`, quote the
///   request's `Authorization` value, as a careless server's error does.
/// - no `Authorization`: 401 as GitHub answers it. Every answer carries `x-ratelimit-resource: graphql`.
struct GraphQLRoutes: RouteHandler {
    static let limit = 5000
    static let issuesRepository = "octokit-fixture-org/paginate-issues"
    static let historyRepository = "TimonVS/release-drafter-test-repo"
    /// The head commit the recorded history cursors name.
    static let historyHead = "00de634cb5f3c0b854eb30b0afe5b1816e372ed3"
    static let documentation =
        "https://docs.github.com/graphql/guides/forming-calls-with-graphql#authenticating-with-graphql"

    private let budget = GraphQLBudget()

    func respond(to request: RouteRequest) -> Response? {
        guard request.match("POST", "/graphql") != nil || request.match("POST", "/api/graphql") != nil else {
            return nil
        }
        guard request.recorded.header("authorization") != nil else {
            return .json(
                .object([
                    ("message", .string("This endpoint requires you to be authenticated.")),
                    ("documentation_url", .string(Self.documentation)),
                ]), status: 401)
        }
        let spent = budget.spend(limit: Self.limit)
        var response = answer(request.recorded.body, authorization: request.recorded.header("authorization") ?? "")
        response.headers += [
            ("x-ratelimit-limit", String(Self.limit)),
            ("x-ratelimit-remaining", String(Self.limit - spent)),
            ("x-ratelimit-reset", String(ServerCore.now() + 3600)),
            ("x-ratelimit-used", String(spent)),
            ("x-ratelimit-resource", "graphql"),
        ]
        return response
    }

    private func answer(_ body: [UInt8], authorization: String) -> Response {
        guard let document = try? JSON(parsing: body), let text = document["query"]?.stringValue else {
            return errors([.object([("message", .string("A query attribute must be specified and must be a string."))])]
            )
        }
        let query = GraphQLQuery(text: text, variables: document["variables"] ?? .null)
        guard let root = query.rootField else {
            return errors([.object([("message", .string("Parse error: no selection in the query"))])])
        }
        if root == "echoToken" {
            return errors([
                .object([
                    ("message", .string("Your token \(authorization) may not ask for echoToken")),
                    ("type", .string("FORBIDDEN")),
                    ("extensions", .object([("authorization", .string(authorization))])),
                ]),
                .object([("message", .string("Also: \(authorization)"))]),
            ])
        }
        guard root == "repository" else {
            return errors([
                .object([
                    ("message", .string("apimacro test server: no recorded answer for the root field '\(root)'")),
                    ("extensions", .object([("code", .string("undefinedField")), ("fieldName", .string(root))])),
                ])
            ])
        }
        let owner = query.argument("owner", of: "repository")?.stringValue ?? ""
        let name = query.argument("name", of: "repository")?.stringValue ?? ""
        do {
            switch "\(owner)/\(name)" {
            case Self.issuesRepository where query.has("issues"):
                return try connection(
                    "issues", nodes: GraphQLFixtures.issueNodes(), query: query, cursor: IssueCursor.self,
                    wrap: { .object([("repository", .object([("issues", $0)]))]) })
            case Self.historyRepository where query.has("history"):
                return try connection(
                    "history", nodes: GraphQLFixtures.historyNodes(), query: query, cursor: HistoryCursor.self,
                    wrap: {
                        .object([("repository", .object([("ref", .object([("target", .object([("history", $0)]))]))]))])
                    })
            default:
                return try notFound(owner: owner, name: name)
            }
        } catch {
            return .message("fixture unavailable: \(error)", status: 500)
        }
    }

    /// One page of `nodes` as a connection, `first` from the query, after its `after` cursor.
    private func connection(
        _ field: String, nodes: [JSON], query: GraphQLQuery, cursor: any ConnectionCursor.Type, wrap: (JSON) -> JSON
    ) -> Response {
        guard case .number(let literal) = query.argument("first", of: field), let first = Int(literal), first >= 0
        else {
            return errors([
                .object([
                    ("type", .string("MISSING_PAGINATION_BOUNDARIES")),
                    ("path", .array([.string("repository"), .string(field)])),
                    (
                        "message",
                        .string(
                            "You must provide a `first` or `last` value to properly paginate the `\(field)` connection."
                        )
                    ),
                ])
            ])
        }
        guard first <= 100 else {
            return errors([
                .object([
                    ("type", .string("EXCESSIVE_PAGINATION")),
                    ("path", .array([.string("repository"), .string(field)])),
                    (
                        "message",
                        .string(
                            "Requesting \(first) records on the `\(field)` connection exceeds the `first` limit of 100 records."
                        )
                    ),
                ])
            ])
        }
        var start = 0
        switch query.argument("after", of: field) {
        case .string(let text):
            guard let index = cursor.index(text), index < nodes.count else {
                return errors([
                    .object([
                        ("path", .array([.string("repository"), .string(field)])),
                        ("message", .string("`\(text)` does not appear to be a valid cursor.")),
                    ])
                ])
            }
            start = index + 1
        default:
            break
        }
        let end = min(nodes.count, start + first)
        let page = Array(nodes[start..<end])
        let pageInfo = JSON.object([
            ("hasNextPage", .bool(end < nodes.count)),
            ("endCursor", page.isEmpty ? .null : .string(cursor.make(end - 1))),
        ])
        let connection = JSON.object([
            ("totalCount", .int(nodes.count)), ("pageInfo", pageInfo), ("nodes", .array(page)),
        ])
        return .json(.object([("data", wrap(connection))]))
    }

    /// The recorded NOT_FOUND answer, naming `owner/name` instead of the recorded repository.
    private func notFound(owner: String, name: String) throws -> Response {
        let recorded = try GraphQLFixtures.document(GraphQLFixtures.notFound)
        let asked = recorded.mapStrings {
            $0.replacing("IBM-Swift/kitura-mustachetemplateengine", with: "\(owner)/\(name)")
        }
        return .json(asked)
    }

    /// `{"errors": [...]}` with HTTP 200, as GitHub answers a query it cannot run.
    private func errors(_ list: [JSON]) -> Response {
        .json(.object([("errors", .array(list))]))
    }
}

/// The points this server's GraphQL answers have used (one a query).
final class GraphQLBudget: Sendable {
    private let used = Mutex(0)

    /// Spends one point (up to `limit`) and returns the points used.
    func spend(limit: Int) -> Int {
        used.withLock { used in
            used = min(limit, used + 1)
            return used
        }
    }
}

/// How a connection's cursors name a position.
protocol ConnectionCursor {
    static func make(_ index: Int) -> String
    static func index(_ cursor: String) -> Int?
}

/// Issue cursors in GitHub's opaque form: base64 of `cursor:v2:` and a msgpack array of one uint16.
enum IssueCursor: ConnectionCursor {
    static let prefix = Array("cursor:v2:".utf8)

    static func make(_ index: Int) -> String {
        Data(prefix + [0x91, 0xCD, UInt8((index >> 8) & 0xFF), UInt8(index & 0xFF)]).base64EncodedString()
    }

    static func index(_ cursor: String) -> Int? {
        guard let data = Data(base64Encoded: cursor) else { return nil }
        let bytes = [UInt8](data)
        guard bytes.count == prefix.count + 4, Array(bytes.prefix(prefix.count)) == prefix,
            bytes[prefix.count] == 0x91, bytes[prefix.count + 1] == 0xCD
        else { return nil }
        return Int(bytes[prefix.count + 2]) << 8 | Int(bytes[prefix.count + 3])
    }
}

/// Commit-history cursors as recorded: `<head sha> <index>`.
enum HistoryCursor: ConnectionCursor {
    static func make(_ index: Int) -> String { "\(GraphQLRoutes.historyHead) \(index)" }

    static func index(_ cursor: String) -> Int? {
        let parts = cursor.split(separator: " ")
        guard parts.count == 2, parts[0] == GraphQLRoutes.historyHead else { return nil }
        return Int(parts[1])
    }
}

/// Just enough of a query's text to route it: the root field, whether a field is selected, and
/// an argument's value (a literal, or a `$variable` looked up in `variables`).
struct GraphQLQuery {
    let text: String
    let variables: JSON

    /// The first field of the first selection set (after an alias, if any).
    var rootField: String? {
        guard let open = text.firstIndex(of: "{") else { return nil }
        var rest = text[text.index(after: open)...]
        func name() -> String? {
            rest = rest.drop { $0.isWhitespace || $0 == "," }
            let word = rest.prefix { $0.isLetter || $0.isNumber || $0 == "_" }
            rest = rest.dropFirst(word.count).drop { $0.isWhitespace }
            return word.isEmpty ? nil : String(word)
        }
        guard let first = name() else { return nil }
        guard rest.first == ":" else { return first }
        rest = rest.dropFirst()
        return name()
    }

    /// Whether `field(` appears.
    func has(_ field: String) -> Bool { arguments(of: field) != nil }

    /// The text between `field(` and its `)`.
    private func arguments(of field: String) -> Substring? {
        guard let match = text.range(of: "\\b\(field)\\s*\\(", options: .regularExpression),
            let close = text[match.upperBound...].firstIndex(of: ")")
        else { return nil }
        return text[match.upperBound..<close]
    }

    /// The value of `name:` in `field(...)`: a number, a string, null, or a variable's value.
    func argument(_ name: String, of field: String) -> JSON? {
        guard let list = arguments(of: field),
            let match = list.range(of: "\\b\(name)\\s*:\\s*", options: .regularExpression)
        else { return nil }
        let rest = list[match.upperBound...]
        if rest.hasPrefix("$") {
            let variable = rest.dropFirst().prefix { $0.isLetter || $0.isNumber || $0 == "_" }
            return variables[String(variable)]
        }
        if rest.hasPrefix("\"") {
            return .string(String(rest.dropFirst().prefix { $0 != "\"" }))
        }
        let word = rest.prefix { $0.isLetter || $0.isNumber || $0 == "-" }
        if word == "null" { return .null }
        return Int(word).map { .int($0) }
    }
}
