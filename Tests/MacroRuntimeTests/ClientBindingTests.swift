import Foundation
import PythonBridge
import TestSupport
import Testing

/// `github`, `request`, `Response` and `map` as a macro sees them, against the loopback server.
extension EmbeddedPython {
    @Suite("clients in Python against the loopback server", .serialized)
    struct ClientBindingTests {
        /// The requests for `path` recorded after `mark` (other suites share the server, so nothing is cleared).
        func requests(_ path: String, since mark: Int = 0) async throws -> [RecordedRequest] {
            try await fixture().server.requests.dropFirst(mark).filter { $0.path == path }
        }

        func mark() async throws -> Int { try await fixture().server.requests.count }

        @Test("github.user returns a dict; rate_limit reflects the last response")
        func user() async throws {
            let result = try await runPython(
                """
                from apimacro import github
                u = github.user('unicodé')
                result = [u['login'], u['name'], sorted(github.rate_limit), github.rate_limit['limit'], 'REDACTED' not in repr(github)]
                """)
            #expect(
                result
                    == .list([
                        .string("unicodé"), .string("Zoë 東京 😀"),
                        .list(["limit", "remaining", "reset", "resource", "used"].map { .string($0) }), .int(5000),
                        .bool(true),
                    ]))
        }

        @Test("a missing user raises NotFound with status, url, api and body")
        func notFound() async throws {
            let result = try await runPython(
                """
                import apimacro
                from apimacro import github
                try:
                    github.user('nobody-here')
                except apimacro.NotFound as e:
                    result = [e.status, e.url.endswith('/users/nobody-here'), e.api, 'Not Found' in e.body,
                              isinstance(e, apimacro.HTTPError), isinstance(e, apimacro.APIError), 'Not Found' in str(e)]
                """)
            #expect(
                result
                    == .list([
                        .int(404), .bool(true), .string("github"), .bool(true), .bool(true), .bool(true), .bool(true),
                    ]))
        }

        @Test("iterators are lazy (one page ahead at most), ask for 100 a page, and limit fetches no extra page")
        func lazyPages() async throws {
            var start = try await mark()
            let first = try await runPython(
                "from apimacro import github\nit = github.repos('many')\nresult = next(it)['name']")
            #expect(first == .string("repo-1"))
            // One page, and at most the one fetched ahead of it (issue 43), never a third.
            let asked = try await requests("/users/many/repos", since: start)
            #expect((1...2).contains(asked.count) && asked.allSatisfy { (Int($0.query["page"] ?? "1") ?? 0) <= 2 })
            start = try await mark()
            let all = try await runPython(
                "from apimacro import github\nresult = len({r['id'] for r in github.repos('many')})")
            #expect(all == .int(2000))
            let pages = try await requests("/users/many/repos", since: start)
            #expect(pages.count == 20)
            #expect(pages.allSatisfy { $0.query["per_page"] == "100" })
            start = try await mark()
            let limited = try await runPython(
                "from apimacro import github\nresult = len(list(github.repos('many', limit=150)))")
            #expect(limited == .int(150))
            #expect(try await requests("/users/many/repos", since: start).count == 2)
            start = try await mark()
            let small = try await runPython(
                "from apimacro import github\nresult = [len(list(github.followers('many', limit=5))), len(list(github.repos('many', limit=0)))]"
            )
            #expect(small == .list([.int(5), .int(0)]))
            #expect(try await requests("/users/many/followers", since: start).map { $0.query["per_page"] } == ["5"])
            #expect(try await requests("/users/many/repos", since: start).isEmpty)
        }

        @Test(
            "paginate follows the recorded octokit Link headers; get decodes one response; extra params reach the query"
        )
        func paginateAndGet() async throws {
            let start = try await mark()
            let result = try await runPython(
                """
                from apimacro import github
                issues = list(github.paginate('/repos/octokit-fixture-org/paginate-issues/issues', params={'per_page': 3}))
                org = github.get('/orgs/octokit-fixture-org')
                repos = list(github.repos('octocat', type='owner', sort='updated'))
                result = [len(issues), org['login'], len(repos)]
                """)
            #expect(result == .list([.int(13), .string("octokit-fixture-org"), .int(8)]))
            let query = try await requests("/users/octocat/repos", since: start).first?.query
            #expect(query?["type"] == "owner" && query?["sort"] == "updated")
        }

        @Test("a 2xx body that is not JSON raises ParseError with status, url and body")
        func parseError() async throws {
            let result = try await runPython(
                """
                import apimacro
                from apimacro import github
                try:
                    github.get('/not-json')
                except apimacro.ParseError as e:
                    result = [e.status, e.url.endswith('/not-json'), e.body.startswith('{"login"')]
                """)
            #expect(result == .list([.int(200), .bool(true), .bool(true)]))
        }

        @Test("the token goes to the client's host, never to another host's pagination link")
        func crossHost() async throws {
            let start = try await mark()
            let result = try await runPython(
                "from apimacro import github\nresult = len(list(github.paginate('/cross-host/items')))")
            #expect(result == .int(3))
            let seen = try await requests("/cross-host/items", since: start)
            #expect(seen.count == 2)
            #expect(
                seen.first { $0.listener == TestServer.mainHost }?.header("authorization") == "Bearer \(Fixture.token)")
            #expect(seen.first { $0.listener == TestServer.otherHost }?.header("authorization") == nil)
        }

        @Test("rate limits: a short retry-after is waited; a long one raises RateLimited with reset_at")
        func rateLimits() async throws {
            let server = try await fixture().server
            server.inject([.rateLimited(retryAfter: 1)], path: "/users/octocat")
            #expect(
                try await runPython("from apimacro import github\nresult = github.user('octocat')['login']")
                    == .string("octocat"))
            server.inject([.forbiddenRateLimit(resetIn: 600)], path: "/users/octocat")
            let result = try await runPython(
                """
                import apimacro, time
                from apimacro import github
                try:
                    github.user('octocat')
                except apimacro.RateLimited as e:
                    result = [e.status, e.reset_at > time.time() + 500, e.retry_after > 500, isinstance(e, apimacro.HTTPError)]
                """)
            #expect(result == .list([.int(403), .bool(true), .bool(true), .bool(true)]))
        }

        @Test("map keeps input order natively, raises the first error, and threads run other callables concurrently")
        func map() async throws {
            let result = try await runPython(
                """
                import apimacro, threading
                from apimacro import github
                logins = ['user%d' % i for i in range(40)]
                ordered = [u['login'] for u in apimacro.map(github.user, logins, concurrency=8)] == logins
                try:
                    apimacro.map(github.user, ['octocat', 'nobody-here', 'user1'])
                    failed = None
                except apimacro.NotFound as e:
                    failed = e.status
                # Concurrency shown by an event, not a duration: all 8 calls meet at a barrier
                # before their request, which only happens if they run at the same time.
                barrier = threading.Barrier(8, timeout=120)
                def meet(ms):
                    barrier.wait()
                    return github.get('/slow', params={'ms': ms})
                slow = apimacro.map(meet, [50] * 8, concurrency=8)
                squares = apimacro.map(lambda x: x * x, range(10), concurrency=3)
                result = [ordered, failed, len(slow), not barrier.broken, squares]
                """)
            #expect(
                result == .list([.bool(true), .int(404), .int(8), .bool(true), .list((0..<10).map { .int($0 * $0) })]))
        }

        @Test("map(return_exceptions=True) runs every call and puts each failure's exception in its place")
        func mapReturnExceptions() async throws {
            let result = try await runPython(
                """
                import apimacro, functools
                from apimacro import github
                logins = ['octocat', 'nobody-here', 'user1', 'nobody-either', 'user2']
                native = apimacro.map(github.user, logins, concurrency=1, return_exceptions=True)
                def user(login):
                    return github.user(login)
                threaded = apimacro.map(user, logins, 1, return_exceptions=True)
                partial = apimacro.map(functools.partial(github.get), ['/users/user3', '/users/nobody'],
                                       return_exceptions=True)
                def shape(results):
                    return [r['login'] if isinstance(r, dict) else (type(r).__name__, r.status) for r in results]
                try:
                    apimacro.map(github.user, logins, 1, True)
                    positional = 'accepted'
                except TypeError as error:
                    positional = str(error)
                result = [shape(native), shape(threaded), shape(partial), native[1].__traceback__ is None, positional]
                """)
            let notFound = PythonValue.tuple([.string("NotFound"), .int(404)])
            let expected: [PythonValue] = [
                .string("octocat"), notFound, .string("user1"), notFound, .string("user2"),
            ]
            #expect(
                result
                    == .list([
                        .list(expected), .list(expected), .list([.string("user3"), notFound]), .bool(true),
                        .string("map() takes at most 3 positional arguments (4 given)"),
                    ]))
        }

        @Test("request: params, headers, json, form, files, auth; Response fields; check=False")
        func request() async throws {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
                "apimacro-upload-\(UUID().uuidString).txt")
            try Data("file on disk".utf8).write(to: folder)
            defer { try? FileManager.default.removeItem(at: folder) }
            let base = try await fixture().server.baseURL
            let result = try await runPython(
                """
                import apimacro, pathlib
                base = \(try pythonLiteral(base))
                r = apimacro.request('POST', base + '/echo', params={'q': 'a b', 'flag': True, 'skip': None},
                                     headers={'X-Custom': 'yes'}, json={'k': ['é', 1]})
                echo = r.json()
                form = apimacro.post(base + '/echo', data={'name': 'Zoë'}).json()
                files = apimacro.post(base + '/echo', data={'field': 'v'},
                                      files={'a': b'bytes!', 'b': ('b.csv', 'x,y', 'text/csv'),
                                             'c': pathlib.Path(\(try pythonLiteral(folder.path)))}).json()
                auth = apimacro.get(base + '/basic-auth/ada/pw', auth=('ada', 'pw')).json()
                missing = apimacro.get(base + '/status/404', check=False)
                try:
                    missing.raise_for_status()
                    raised = False
                except apimacro.NotFound:
                    raised = True
                result = [
                    r.status, r.ok, r.headers['CONTENT-TYPE'].startswith('application/json'), 'content-type' in r.headers,
                    echo['method'], sorted(echo['query'].items()), echo['headers']['x-custom'], echo['json'],
                    echo['headers']['user-agent'].startswith('apimacro/'),
                    form['form'], files['form'], sorted((f['name'], f['filename'], f['text']) for f in files['files']),
                    auth['authenticated'], missing.status, raised, repr(missing).startswith('<Response [404] GET'),
                ]
                """)
            #expect(
                result
                    == .list([
                        .int(200), .bool(true), .bool(true), .bool(true), .string("POST"),
                        .list([.tuple([.string("flag"), .string("true")]), .tuple([.string("q"), .string("a b")])]),
                        .string("yes"),
                        .object([("k", .list([.string("é"), .int(1)]))]), .bool(true),
                        .object([("name", .string("Zoë"))]), .object([("field", .string("v"))]),
                        .list([
                            .tuple([.string("a"), .string("a"), .string("bytes!")]),
                            .tuple([.string("b"), .string("b.csv"), .string("x,y")]),
                            .tuple([.string("c"), .string(folder.lastPathComponent), .string("file on disk")]),
                        ]),
                        .bool(true), .int(404), .bool(true), .bool(true),
                    ]))
        }

        @Test("text, bytes, RSS and Atom feeds, timeouts and bad URLs")
        func responseKinds() async throws {
            let base = try await fixture().server.baseURL
            let result = try await runPython(
                """
                import apimacro
                base = \(try pythonLiteral(base))
                text = apimacro.get(base + '/text').text
                size = len(apimacro.get(base + '/bytes/1000').content)
                rss = apimacro.get(base + '/feed.rss').xml()
                atom = apimacro.get(base + '/feed.atom').xml()
                try:
                    apimacro.get(base + '/slow', params={'ms': 600000}, timeout=0.3)
                    timeout = None
                except apimacro.Timeout as e:
                    timeout = [isinstance(e, apimacro.NetworkError), e.url.endswith('ms=600000')]
                errors = []
                for bad in ('not a url', 'ftp://example.com/x', '/relative/path'):
                    try:
                        apimacro.get(bad)
                    except ValueError:
                        errors.append('ValueError')
                try:
                    apimacro.get('http://example.invalid/x', auth=('u', 'p'))
                except apimacro.AuthError:
                    errors.append('AuthError')
                try:
                    apimacro.get(base + '/text').json()
                except apimacro.ParseError:
                    errors.append('ParseError')
                result = [text, size, rss.tag, len(rss.findall('./channel/item')), atom.tag.endswith('feed'),
                          len([e for e in atom if e.tag.endswith('entry')]), timeout, errors]
                """)
            #expect(
                result
                    == .list([
                        .string("héllo wörld\n"), .int(1000), .string("rss"), .int(3), .bool(true), .int(2),
                        .list([.bool(true), .bool(true)]),
                        .list(
                            ["ValueError", "ValueError", "ValueError", "AuthError", "ParseError"].map { .string($0) }),
                    ]))
        }

        @Test("a wide native fan-out: 2,000 calls, 32 in flight, in order (a release-build crash once lived here)")
        func wideFanOut() async throws {
            let result = try await runPython(
                """
                import apimacro
                from apimacro import github
                logins = ['user%d' % (i % 50) for i in range(2000)]
                users = apimacro.map(github.user, logins, concurrency=32)
                result = [len(users), [u['login'] for u in users] == logins]
                """)
            #expect(result == .list([.int(2000), .bool(true)]))
        }

        @Test("plain Python threads calling github.user run concurrently")
        func pythonThreads() async throws {
            let result = try await runPython(
                """
                import threading, time
                from apimacro import github
                out = []
                def work():
                    out.append(github.get('/slow', params={'ms': 2000}))
                threads = [threading.Thread(target=work) for _ in range(6)]
                for t in threads: t.start()
                # While the requests wait on the network the GIL is free, so this loop keeps
                # running; a request holding the GIL would stop it until the end (0 or 1 turns).
                # Counted turns, not elapsed time: load slows both sides alike.
                turns = 0
                while any(t.is_alive() for t in threads):
                    turns += 1
                    time.sleep(0.001)
                result = [len(out), turns >= 5]
                """)
            #expect(result == .list([.int(6), .bool(true)]))
        }
    }
}
