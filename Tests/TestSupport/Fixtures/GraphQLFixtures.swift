import Foundation
import Synchronization

/// The recorded GitHub GraphQL answers in `Tests/TestSupport/Fixtures/graphql/` (see the README
/// there for where each comes from), read from the source tree once per process.
enum GraphQLFixtures {
    private static let cache = Mutex<[String: JSON]>([:])

    /// `Tests/TestSupport/Fixtures/graphql`, beside this source file.
    static var directory: String {
        let components = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
        return components.dropLast().joined(separator: "/") + "/graphql"
    }

    /// The parsed document of `name` (a file in `directory`).
    static func document(_ name: String) throws -> JSON {
        if let cached = cache.withLock({ $0[name] }) { return cached }
        let path = directory + "/" + name
        guard let data = FileManager.default.contents(atPath: path) else {
            throw FixtureError(path: path, reason: "cannot be read")
        }
        let document = try JSON(parsing: [UInt8](data))
        cache.withLock { $0[name] = document }
        return document
    }

    /// release-drafter's recording of `repository.ref.target.history` (16 commits, one page).
    static let history = "release-drafter-graphql-commits-merge-commit.json"
    /// Swift Package Index's recording of a repository that does not resolve: NOT_FOUND with
    /// `data.repository: null` (partial data).
    static let notFound = "spi-graphql-repository-not-found.json"

    /// The commit nodes of the history recording, in recorded order.
    static func historyNodes() throws -> [JSON] {
        let history = try document(Self.history)["data"]?["repository"]?["ref"]?["target"]?["history"]
        guard let nodes = history?["nodes"]?.arrayValue else {
            throw FixtureError(path: Self.history, reason: "has no data.repository.ref.target.history.nodes")
        }
        return nodes
    }

    /// octokit's recorded open issues of `octokit-fixture-org/paginate-issues` (../shared/fixtures,
    /// REST), newest first, as GraphQL `Issue` nodes: the recorded values in the documented shape.
    static func issueNodes() throws -> [JSON] {
        try FixtureStore.exchanges("github/octokit-paginate-issues.json").flatMap { exchange -> [JSON] in
            (exchange.response.arrayValue ?? []).map { issue in
                let labels = (issue["labels"]?.arrayValue ?? []).map { label in
                    JSON.object([("name", label["name"] ?? .null), ("color", label["color"] ?? .null)])
                }
                return .object([
                    ("id", issue["node_id"] ?? .null),
                    ("number", issue["number"] ?? .null),
                    ("title", issue["title"] ?? .null),
                    ("url", issue["html_url"] ?? .null),
                    ("state", .nullable(issue["state"]?.stringValue?.uppercased())),
                    ("createdAt", issue["created_at"] ?? .null),
                    ("author", .object([("login", issue["user"]?["login"] ?? .null)])),
                    ("labels", .object([("totalCount", .int(labels.count)), ("nodes", .array(labels))])),
                ])
            }
        }
    }
}
