import Synchronization

/// GitHub's writes on issues, comments and labels, kept per server: `POST
/// /repos/{owner}/{repo}/issues`, `PATCH …/issues/{number}`, `POST …/issues/{number}/comments`,
/// `POST …/labels` and `DELETE …/labels/{name}`, `PUT …/issues/{number}/lock`.
///
/// Answers have the shapes of GitHub's REST documentation (https://docs.github.com/rest/issues):
/// 201 with the object made, 200 with the object changed, 204 with no body for a lock or a
/// deletion, and the 422 "Validation Failed" body the documentation shows under "Client errors"
/// (https://docs.github.com/rest/using-the-rest-api/troubleshooting-the-rest-api): `errors`
/// entries of `resource`, `field` and `code` (`missing_field` for an issue without a title,
/// `already_exists` for a label made twice).
final class GitHubWriteRoutes: RouteHandler, Sendable {
    private struct Store {
        var issues: [String: [JSON]] = [:]
        var labels: [String: Set<String>] = [:]
        var comments = 0
    }
    private let store = Mutex(Store())

    func respond(to request: RouteRequest) -> Response? {
        guard ["POST", "PATCH", "PUT", "DELETE"].contains(request.method), request.segments.first == "repos",
            request.segments.count >= 4
        else { return nil }
        let repository = "\(request.segments[1])/\(request.segments[2])"
        let rest = Array(request.segments.dropFirst(3))
        let body = (try? JSON(parsing: request.recorded.body)) ?? .object([])
        switch (request.method, rest.count, rest.first) {
        case ("POST", 1, "issues"):
            return createIssue(in: repository, body: body, origin: request.origin)
        case ("PATCH", 2, "issues"):
            return updateIssue(rest[1], in: repository, body: body)
        case ("POST", 3, "issues") where rest[2] == "comments":
            return comment(on: rest[1], in: repository, body: body, origin: request.origin)
        case ("PUT", 3, "issues") where rest[2] == "lock":
            return issue(rest[1], in: repository) == nil ? notFound("/issues/issues#lock-an-issue") : noContent
        case ("POST", 1, "labels"):
            return createLabel(in: repository, body: body)
        case ("DELETE", 2, "labels"):
            let removed = store.withLock { $0.labels[repository]?.remove(rest[1]) != nil }
            return removed ? noContent : notFound("/issues/labels#delete-a-label")
        default:
            return nil
        }
    }

    private let noContent = Response(status: 204)

    private func notFound(_ documentation: String) -> Response {
        GitHubUserRoutes.notFound(documentation)
    }

    /// GitHub's 422 for one field.
    static func validationFailed(resource: String, field: String, code: String, documentation: String) -> Response {
        .json(
            .object([
                ("message", .string("Validation Failed")),
                (
                    "errors",
                    .array([
                        .object([("resource", .string(resource)), ("code", .string(code)), ("field", .string(field))])
                    ])
                ),
                ("documentation_url", .string(GitHubUserRoutes.docs + documentation)),
                ("status", .string("422")),
            ]), status: 422)
    }

    private func createIssue(in repository: String, body: JSON, origin: String) -> Response {
        guard let title = body["title"]?.stringValue, !title.isEmpty else {
            return Self.validationFailed(
                resource: "Issue", field: "title", code: "missing_field",
                documentation: "/issues/issues#create-an-issue")
        }
        let labels = (body["labels"]?.arrayValue ?? []).compactMap(\.stringValue)
        let issue = store.withLock { store -> JSON in
            let number = (store.issues[repository]?.count ?? 0) + 1
            let made = JSON.object([
                ("id", .int(5_000_000 + number)),
                ("number", .int(number)),
                ("url", .string("\(origin)/repos/\(repository)/issues/\(number)")),
                ("html_url", .string("https://github.com/\(repository)/issues/\(number)")),
                ("title", .string(title)),
                ("body", body["body"] ?? .null),
                ("state", .string("open")),
                ("labels", .array(labels.map { .object([("name", .string($0))]) })),
                ("user", .object([("login", .string("apimacro-test[bot]")), ("type", .string("Bot"))])),
                ("comments", .int(0)),
            ])
            store.issues[repository, default: []].append(made)
            return made
        }
        return .json(issue, status: 201)
    }

    private func issue(_ number: String, in repository: String) -> JSON? {
        guard let index = Int(number), index >= 1 else { return nil }
        return store.withLock { store in
            guard let issues = store.issues[repository], index <= issues.count else { return nil }
            return issues[index - 1]
        }
    }

    private func updateIssue(_ number: String, in repository: String, body: JSON) -> Response {
        guard let index = Int(number), index >= 1 else { return notFound("/issues/issues#update-an-issue") }
        let updated = store.withLock { store -> JSON? in
            guard var issues = store.issues[repository], index <= issues.count else { return nil }
            var issue = issues[index - 1]
            for key in ["title", "body", "state"] {
                if let value = body[key] { issue = issue.setting(key, value) }
            }
            issues[index - 1] = issue
            store.issues[repository] = issues
            return issue
        }
        guard let updated else { return notFound("/issues/issues#update-an-issue") }
        return .json(updated)
    }

    private func comment(on number: String, in repository: String, body: JSON, origin: String) -> Response {
        guard issue(number, in: repository) != nil else { return notFound("/issues/comments#create-an-issue-comment") }
        guard let text = body["body"]?.stringValue, !text.isEmpty else {
            return Self.validationFailed(
                resource: "IssueComment", field: "body", code: "missing_field",
                documentation: "/issues/comments#create-an-issue-comment")
        }
        let id = store.withLock { store -> Int in
            store.comments += 1
            return 7_000_000 + store.comments
        }
        return .json(
            .object([
                ("id", .int(id)),
                ("url", .string("\(origin)/repos/\(repository)/issues/comments/\(id)")),
                ("body", .string(text)),
                ("user", .object([("login", .string("apimacro-test[bot]"))])),
            ]), status: 201)
    }

    private func createLabel(in repository: String, body: JSON) -> Response {
        guard let name = body["name"]?.stringValue, !name.isEmpty else {
            return Self.validationFailed(
                resource: "Label", field: "name", code: "missing_field", documentation: "/issues/labels#create-a-label")
        }
        let isNew = store.withLock { $0.labels[repository, default: []].insert(name).inserted }
        guard isNew else {
            return Self.validationFailed(
                resource: "Label", field: "name", code: "already_exists", documentation: "/issues/labels#create-a-label"
            )
        }
        return .json(
            .object([
                ("name", .string(name)), ("color", body["color"] ?? .string("ededed")), ("default", .bool(false)),
            ]), status: 201)
    }
}
