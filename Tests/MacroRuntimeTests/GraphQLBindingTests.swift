import Foundation
import PythonBridge
import TestSupport
import Testing

/// `github.graphql` and `github.graphql_paginate` as a macro sees them, against the loopback server.
extension EmbeddedPython {
    @Suite("GitHub GraphQL in Python against the loopback server", .serialized)
    struct GraphQLBindingTests {
        static let issues = """
            ISSUES = '''query($owner: String!, $name: String!, $cursor: String) {
              repository(owner: $owner, name: $name) {
                issues(first: 5, after: $cursor, states: OPEN) {
                  pageInfo { hasNextPage endCursor }
                  nodes { number title labels(first: 10) { nodes { name } } }
                }
              }
            }'''
            REPO = dict(owner='octokit-fixture-org', name='paginate-issues')

            """

        /// The GraphQL requests recorded after `mark`.
        func graphQLRequests(since mark: Int) async throws -> [RecordedRequest] {
            try await fixture().server.requests.dropFirst(mark).filter { $0.path == "/graphql" }
        }

        func mark() async throws -> Int { try await fixture().server.requests.count }

        @Test("graphql returns data; rate_limit is the graphql resource, then core again after a REST call")
        func query() async throws {
            let result = try await runPython(
                Self.issues + """
                    from apimacro import github
                    data = github.graphql(ISSUES, **REPO)
                    issues = data['repository']['issues']
                    after_graphql = github.rate_limit['resource']
                    github.user('octocat')
                    result = [len(issues['nodes']), issues['nodes'][0]['number'], issues['pageInfo']['hasNextPage'],
                              after_graphql, github.rate_limit['resource']]
                    """)
            #expect(result == .list([.int(5), .int(13), .bool(true), .string("graphql"), .string("core")]))
        }

        @Test(
            "graphql_paginate follows endCursor through $cursor, one request a page, and limit asks for no extra page")
        func pages() async throws {
            var start = try await mark()
            let all = try await runPython(
                Self.issues
                    + "from apimacro import github\nresult = [i['number'] for i in github.graphql_paginate(ISSUES, 'repository.issues', **REPO)]"
            )
            #expect(all == .list((1...13).reversed().map { .int($0) }))
            let requests = try await graphQLRequests(since: start)
            #expect(requests.count == 3)
            let cursors = try requests.map { request -> String? in
                let body = try #require(try JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any])
                return (body["variables"] as? [String: Any])?["cursor"] as? String
            }
            #expect(cursors[0] == nil && cursors[1] != nil && cursors[2] != nil && cursors[1] != cursors[2])
            start = try await mark()
            let five = try await runPython(
                Self.issues
                    + "from apimacro import github\nresult = len(list(github.graphql_paginate(ISSUES, 'repository.issues', limit=5, **REPO)))"
            )
            #expect(five == .int(5))
            #expect(try await graphQLRequests(since: start).count == 1)
            start = try await mark()
            let lazy = try await runPython(
                Self.issues
                    + "from apimacro import github\nit = github.graphql_paginate(ISSUES, 'repository.issues', **REPO)\nresult = [next(it)['number'], next(it)['number']]"
            )
            #expect(lazy == .list([.int(13), .int(12)]))
            #expect(try await graphQLRequests(since: start).count == 1)
        }

        @Test("the recorded commit history pages too (nodes at a deeper path)")
        func history() async throws {
            let result = try await runPython(
                """
                from apimacro import github
                q = '''query($cursor: String) { repository(owner: "TimonVS", name: "release-drafter-test-repo") {
                  ref(qualifiedName: "master") { target { ... on Commit {
                    history(first: 7, after: $cursor) { pageInfo { hasNextPage endCursor } nodes { message } } } } } } }'''
                commits = list(github.graphql_paginate(q, 'repository.ref.target.history'))
                result = [len(commits), commits[-1]['message']]
                """)
            #expect(result == .list([.int(16), .string("Initial commit")]))
        }

        @Test("an answer with errors raises GraphQLError with .errors, the partial .data and the first message")
        func errors() async throws {
            let result = try await runPython(
                Self.issues + """
                    import apimacro
                    from apimacro import github
                    try:
                        github.graphql(ISSUES, owner='nobody', name='nothing')
                    except apimacro.GraphQLError as e:
                        result = [str(e).startswith("Could not resolve to a Repository with the name 'nobody/nothing'."),
                                  e.errors[0]['type'], e.data['repository'], isinstance(e, apimacro.APIError), e.status,
                                  e.url.endswith('/graphql'), e.api]
                    """)
            #expect(
                result
                    == .list([
                        .bool(true), .string("NOT_FOUND"), .none, .bool(true), .int(200), .bool(true),
                        .string("github"),
                    ]))
            let paged = try await runPython(
                Self.issues + """
                    import apimacro
                    from apimacro import github
                    try:
                        list(github.graphql_paginate(ISSUES, 'repository.issues', owner='nobody', name='nothing'))
                    except apimacro.GraphQLError as e:
                        result = e.errors[0]['path']
                    """)
            #expect(paged == .list([.string("repository")]))
        }

        @Test("a GraphQL error that quotes the token holds REDACTED in str, repr, args, errors and body")
        func errorsRedacted() async throws {
            let result = try await runPython(
                """
                import apimacro
                from apimacro import github
                try:
                    github.graphql('query { echoToken }')
                except apimacro.GraphQLError as e:
                    seen = [str(e), repr(e), repr(e.args), repr(e.errors), e.body, e.message]
                    result = [[\(try pythonLiteral(Fixture.token)) in text for text in seen], 'REDACTED' in str(e),
                              e.errors[0]['extensions']['authorization'], len(e.errors), e.errors[0]['type']]
                """)
            #expect(
                result
                    == .list([
                        .list(Array(repeating: .bool(false), count: 6)), .bool(true), .string("Bearer REDACTED"),
                        .int(2),
                        .string("FORBIDDEN"),
                    ]))
        }

        @Test("a parse error of a body that echoes the token holds REDACTED in its message, args and body")
        func parseErrorsRedacted() async throws {
            let base = try await fixture().server.baseURL
            let result = try await runPython(
                """
                import apimacro
                from apimacro import github
                token = \(try pythonLiteral(Fixture.token))
                response = apimacro.get(\(try pythonLiteral(base)) + '/hostile/echo-text',
                                        headers={'Authorization': 'Bearer ' + token})
                errors = []
                for parse in (response.json, response.xml, lambda: github.get('/hostile/echo-text')):
                    try:
                        parse()
                    except apimacro.ParseError as e:
                        errors.append(e)
                own = apimacro.HTTPError('a macro quoting ' + token, body=token, url='http://x/?t=' + token)
                seen = [str(e) + repr(e) + repr(e.args) + (e.body or '') + str(e.url) for e in errors + [own]]
                result = [len(errors), [token in text for text in seen], ['REDACTED' in (e.body or '') for e in errors]]
                """)
            #expect(
                result
                    == .list([
                        .int(3), .list(Array(repeating: .bool(false), count: 4)),
                        .list(Array(repeating: .bool(true), count: 3)),
                    ]))
        }

        @Test("HTTP 401 from the GraphQL endpoint raises Unauthorized")
        func unauthorized() async throws {
            try await fixture().server.inject(
                [
                    .status(
                        401,
                        body: #"{"message":"Bad credentials","documentation_url":"https://docs.github.com/graphql"}"#)
                ], path: "/graphql")
            let result = try await runPython(
                Self.issues + """
                    import apimacro
                    from apimacro import github
                    try:
                        github.graphql(ISSUES, **REPO)
                    except apimacro.Unauthorized as e:
                        result = [e.status, 'Bad credentials' in str(e), isinstance(e, apimacro.GraphQLError)]
                    """)
            #expect(result == .list([.int(401), .bool(true), .bool(false)]))
        }

        @Test("a query without $cursor is a ValueError before any request; an answer without pageInfo is a ValueError")
        func misuse() async throws {
            let start = try await mark()
            let noCursor = try await runPython(
                """
                from apimacro import github
                try:
                    github.graphql_paginate('query { repository(owner: "a", name: "b") { issues(first: 5) { nodes { number } } } }', 'repository.issues')
                except ValueError as e:
                    result = str(e)
                """)
            guard case .string(let message) = noCursor else {
                Issue.record("expected a ValueError, got \(noCursor)")
                return
            }
            #expect(message.contains("$cursor"))
            #expect(try await graphQLRequests(since: start).isEmpty)
            let noPageInfo = try await runPython(
                Self.issues + """
                    from apimacro import github
                    try:
                        list(github.graphql_paginate(ISSUES, 'repository', **REPO))
                    except ValueError as e:
                        no_page_info = str(e)
                    try:
                        list(github.graphql_paginate(ISSUES, 'repository.pulls', **REPO))
                    except ValueError as e:
                        wrong_path = str(e)
                    result = [no_page_info, wrong_path]
                    """)
            guard case .list(let messages) = noPageInfo, messages.count == 2, case .string(let pageInfo) = messages[0],
                case .string(let wrongPath) = messages[1]
            else {
                Issue.record("expected two ValueErrors, got \(noPageInfo)")
                return
            }
            #expect(pageInfo.contains("repository has no pageInfo"))
            #expect(wrongPath.contains("'repository.pulls'") && wrongPath.contains("issues"))
        }

        @Test("a hostile answer: error text loses control characters (repeated cursors: GraphQLLoopTests)")
        func hostileAnswers() async throws {
            let result = try await runPython(
                """
                import apimacro, _apimacro
                page = {'data': {'a': {'pageInfo': {'hasNextPage': True, 'endCursor': 'same'}, 'nodes': [1]}}}
                try:
                    _apimacro._graphql_data({'errors': [{'message': 'bad\\x1b[31m' + 'x' * 900}]}, 200, 'http://x/graphql', '')
                except apimacro.GraphQLError as e:
                    cleaned = ['\\x1b' not in str(e), len(str(e)) < 520, e.errors[0]['message'].startswith('bad\\x1b')]
                result = [_apimacro._graphql_page(page, 'a', 200, 'u', '')] + cleaned
                """)
            #expect(
                result
                    == .list([
                        .list([.list([.int(1)]), .string("same")]), .bool(true), .bool(true), .bool(true),
                    ]))
        }

        @Test("github.graphql and graphql_paginate are methods the REPL completes (dir of github)")
        func completion() async throws {
            let result = try await runPython(
                """
                import rlcompleter
                from apimacro import github
                completer = rlcompleter.Completer({'github': github})
                found, state = [], 0
                while (match := completer.complete('github.gra', state)) is not None:
                    found.append(match)
                    state += 1
                result = sorted(found)
                """)
            #expect(result == .list([.string("github.graphql("), .string("github.graphql_paginate(")]))
        }
    }
}
