import Clients
import Foundation
import TestSupport
import Testing
import WebAPI

@Suite("GitHub writes against the loopback server")
struct GitHubWriteTests {
    static func issue(_ json: String, repository: String = "octo/writes") -> GitHubRouter {
        .write(
            method: "POST", path: "/repos/\(repository)/issues", parameters: [], headers: [],
            body: .json(Array(json.utf8)))
    }

    @Test("a POST sends its JSON body with the token and returns what GitHub made")
    func post() async throws {
        try await withGitHubClient(token: "ghp_writetest123") { client, server in
            let response = try await client.send(Self.issue(#"{"title":"Found a bug","labels":["bug"]}"#))
            #expect(response.status == 201)
            #expect(JSONPath.value(in: response.body, path: ["number"]) as? Int == 1)
            let request = try #require(server.requests.last)
            #expect(request.method == "POST")
            #expect(request.header("content-type") == "application/json")
            #expect(request.header("authorization") == "Bearer ghp_writetest123")
            #expect(request.bodyText == #"{"title":"Found a bug","labels":["bug"]}"#)
            let patch = try await client.send(
                .write(
                    method: "PATCH", path: "/repos/octo/writes/issues/1", parameters: [], headers: [],
                    body: .json(Array(#"{"state":"closed"}"#.utf8))))
            #expect(JSONPath.string(in: patch.body, path: ["state"]) == "closed")
            let lock = try await client.send(
                .write(
                    method: "PUT", path: "/repos/octo/writes/issues/1/lock", parameters: [], headers: [], body: .none))
            #expect(lock.status == 204 && lock.body.isEmpty)
        }
    }

    @Test("a 422 carries GitHub's errors list and names each entry in its message")
    func validationFailed() async throws {
        try await withGitHubClient(token: "ghp_writetest123") { client, _ in
            let error = try await #require(throws: APIError.self) {
                try await client.send(Self.issue(#"{"body":"no title"}"#))
            }
            #expect(error.status == 422)
            #expect(error.kind == .http)
            #expect(error.message.hasSuffix("422 Unprocessable Entity: Validation Failed (title: missing_field)"))
            let details = try #require(error.errorList)
            let entries = try #require(
                try JSONSerialization.jsonObject(with: Data(details.utf8)) as? [[String: String]])
            #expect(entries == [["resource": "Issue", "code": "missing_field", "field": "title"]])
        }
    }

    @Test("a write is never sent twice: not after a timeout, not after a reset connection")
    func neverRetried() async throws {
        try await withGitHubClient(token: "ghp_writetest123") { client, server in
            server.inject([.delay(milliseconds: 600_000)], path: "/repos/octo/slow/issues")
            var request = Self.issue(#"{"title":"slow"}"#, repository: "octo/slow").request
            request.timeout = 0.3
            let timeout = try await #require(throws: APIError.self) { try await client.api.send(request) }
            #expect(timeout.kind == .timeout)
            #expect(server.requests.filter { $0.path == "/repos/octo/slow/issues" }.count == 1)
            server.inject([.reset], path: "/repos/octo/reset/issues")
            let reset = try await #require(throws: APIError.self) {
                try await client.send(Self.issue(#"{"title":"reset"}"#, repository: "octo/reset"))
            }
            #expect(reset.kind == .network)
            #expect(server.requests.filter { $0.path == "/repos/octo/reset/issues" }.count == 1)
            // A GET of the same reset is tried again (the control: the fault is real).
            server.inject([.reset], path: "/users/octocat")
            _ = try await client.send(.user(login: "octocat"))
            #expect(server.requests.filter { $0.path == "/users/octocat" }.count == 2)
        }
    }
}
