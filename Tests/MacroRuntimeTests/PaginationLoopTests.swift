import Foundation
import PythonBridge
import TestSupport
import Testing

/// Pages that link back to a page already fetched (`PaginationLoopRoutes`): every paginator
/// ends the iteration with a `ParseError` naming the repeated URL or cursor, after yielding the
/// items before it, and the server sees each page once.
///
/// Each macro asks for up to 200 items, so without the loop check it ends (with 200 items and
/// no error) rather than hang.
extension EmbeddedPython {
    @Suite("pagination that loops ends in a ParseError", .serialized)
    struct PaginationLoopTests {
        /// Runs `iterator` (a Python expression) to its end; the result is the items' ids, then
        /// the ParseError's message and url (or "no error").
        static func drain(_ iterator: String, id: String = "item['id']") -> String {
            """
            import apimacro
            from apimacro import github, instagram
            seen = []
            try:
                for item in \(iterator):
                    seen.append(\(id))
                result = [seen, 'no error', None]
            except apimacro.ParseError as e:
                result = [seen, str(e), e.url]
            """
        }

        /// The requests the shared server received after `mark` whose path starts with `prefix`.
        func requests(since mark: Int, under prefix: String) async throws -> [RecordedRequest] {
            try await fixture().server.requests.dropFirst(mark).filter { $0.path.hasPrefix(prefix) }
        }

        func mark() async throws -> Int { try await fixture().server.requests.count }

        @Test("a Link: rel=\"next\" to the page itself (cacheable): one request, then a ParseError naming it")
        func selfLink() async throws {
            let start = try await mark()
            let result = try await runPython(Self.drain("github.paginate('/hostile/loop/self', limit=200)"))
            let server = try await fixture().server
            guard case .list(let parts) = result, parts.count == 3, case .string(let message) = parts[1] else {
                Issue.record("unexpected result \(result)")
                return
            }
            #expect(parts[0] == .list([.int(1)]), "the page's item comes first")
            #expect(
                message.hasPrefix(
                    "the next page, \(server.baseURL)/hostile/loop/self?per_page=100, was already fetched"),
                "\(message)")
            #expect(parts[2] == .string("\(server.baseURL)/hostile/loop/self?per_page=100"))
            #expect(try await requests(since: start, under: "/hostile/loop/self").count == 1)
        }

        @Test(
            "two pages linking to each other, the way back spelt another way: two requests, then a ParseError",
            arguments: ["exact", "fragment", "reordered", "dots", "case"])
        func pair(spell: String) async throws {
            let start = try await mark()
            let result = try await runPython(
                Self.drain("github.paginate('/hostile/loop/pair/a', params={'spell': '\(spell)', 'n': '1'}, limit=200)")
            )
            guard case .list(let parts) = result, parts.count == 3, case .string(let message) = parts[1] else {
                Issue.record("unexpected result \(result)")
                return
            }
            #expect(parts[0] == .list([.int(1), .int(2)]))
            #expect(message.contains("/pair/a") && message.contains("was already fetched"), "\(message)")
            #expect(message.contains("(2 pages so far)"), "\(message)")
            let paths = try await requests(since: start, under: "/hostile/loop/").map(\.path)
            #expect(paths == ["/hostile/loop/pair/a", "/hostile/loop/pair/b"])
        }

        @Test("an Instagram v1 next_url leading back: two requests, then a ParseError whose URL hides the token")
        func instagramNextURL() async throws {
            let token = "ig-token-loopSecret4711"
            let start = try await mark()
            let result = try await runPython(
                InstagramShortenerTests.login + "login('\(token)')\n"
                    + Self.drain("instagram.recent_media(user_id='loop', limit=200)"))
            guard case .list(let parts) = result, parts.count == 3, case .string(let message) = parts[1],
                case .string(let url) = parts[2]
            else {
                Issue.record("unexpected result \(result)")
                return
            }
            #expect(parts[0] == .list([.string("1"), .string("2")]))
            #expect(message.contains("/users/loop/media/recent?access_token=REDACTED&count=100"), "\(message)")
            #expect(message.contains("was already fetched"), "\(message)")
            #expect(!message.contains(token) && !url.contains(token))
            let pages = try await requests(since: start, under: "/instagram/v1/users/loop/")
            #expect(pages.count == 2, "\(pages.map(\.uri))")
            // Negative control: the server's links did carry the token.
            #expect(pages.allSatisfy { $0.query["access_token"] == token })
        }

        static let query = """
            Q = '''query($owner: String!, $name: String!, $cursor: String) {
              repository(owner: $owner, name: $name) {
                issues(first: 1, after: $cursor) { pageInfo { hasNextPage endCursor } nodes { number } }
              }
            }'''

            """

        @Test(
            "GraphQL cursors A, B, A (and A, A; and a cursor the macro passed coming back): a ParseError naming it",
            arguments: [
                ("name='alternate'", [1, 2, 3], "\"A\"", 3),
                ("name='repeat'", [1, 2], "\"A\"", 2),
                ("name='repeat', cursor='A'", [2], "\"A\"", 1),
            ])
        func graphQLCursors(variables: String, numbers: [Int], cursor: String, posts: Int) async throws {
            let start = try await mark()
            let result = try await runPython(
                Self.query
                    + Self.drain(
                        "github.graphql_paginate(Q, 'repository.issues', owner='hostile-loop', \(variables), limit=200)",
                        id: "item['number']"))
            guard case .list(let parts) = result, parts.count == 3, case .string(let message) = parts[1] else {
                Issue.record("unexpected result \(result)")
                return
            }
            #expect(parts[0] == .list(numbers.map { .int($0) }))
            #expect(
                message.hasPrefix(
                    "graphql_paginate: repository.issues.pageInfo.endCursor \(cursor) was already sent in this iteration"
                ),
                "\(message)")
            let sent = try await requests(since: start, under: "/graphql").filter {
                $0.bodyText.contains("hostile-loop")
            }
            #expect(sent.count == posts)
        }
    }
}
