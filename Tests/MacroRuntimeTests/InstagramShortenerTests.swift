import Foundation
import PythonBridge
import TestSupport
import Testing

/// `instagram` and `shortener` as a macro sees them, against the loopback server.
extension EmbeddedPython {
    @Suite("instagram and shortener in Python", .serialized)
    struct InstagramShortenerTests {
        /// Logs the shared host in with `token` through complete_login (as after a browser redirect).
        static let login = """
            import apimacro
            from apimacro import instagram
            def login(token):
                url = instagram.authorize_url()
                state = dict(p.split('=', 1) for p in url.split('?', 1)[1].split('&'))['state']
                instagram.complete_login('http://127.0.0.1:8765/callback#access_token=' + token + '&state=' + state)

            """

        @Test("the login flow: authorize_url, state checks, access_denied, a stored 0600 token")
        func loginFlow() async throws {
            let result = try await runPython(
                Self.login + """
                    url = instagram.authorize_url(state='fixed-state')
                    errors = []
                    for redirect in ('http://127.0.0.1:8765/callback#access_token=ig-token-1&state=other',
                                     'http://127.0.0.1:8765/callback?error=access_denied&error_reason=user_denied&error_description=The+user+denied+your+request.&state=fixed-state'):
                        try:
                            instagram.complete_login(redirect)
                        except apimacro.AuthError as e:
                            errors.append(str(e))
                    login('ig-token-1')
                    import os, stat
                    mode = stat.S_IMODE(os.stat(\(try pythonLiteral(Fixture.home.appendingPathComponent("credentials.json").path))).st_mode)
                    result = ['client_id=test-client' in url, 'response_type=token' in url, 'state=fixed-state' in url,
                              'state mismatch' in errors[0], 'access_denied' in errors[1], 'user denied' in errors[1],
                              instagram.logged_in, oct(mode)]
                    """)
            #expect(
                result
                    == .list([
                        .bool(true), .bool(true), .bool(true), .bool(true), .bool(true), .bool(true), .bool(true),
                        .string("0o600"),
                    ]))
        }

        @Test("complete_login() with no authorize_url() before it is refused and stores nothing (issue 18, item 7)")
        func completeLoginWithoutPendingState() async throws {
            let credentials = Fixture.home.appendingPathComponent("credentials.json")
            let result = try await runPython(
                Self.login + """
                    try:
                        instagram.complete_login('http://127.0.0.1:8765/callback#access_token=ATTACKER-token-7&state=forged')
                        outcome = 'stored'
                    except apimacro.AuthError as e:
                        outcome = str(e)
                    result = outcome
                    """)
            guard case .string(let message) = result else {
                Issue.record("unexpected result \(result)")
                return
            }
            #expect(message.contains("no instagram login is pending"), "\(message)")
            #expect(message.contains("instagram.authorize_url()"), "\(message)")
            #expect(!message.contains("ATTACKER-token-7"))
            let stored = (try? String(contentsOf: credentials, encoding: .utf8)) ?? ""
            #expect(!stored.contains("ATTACKER-token-7"))
        }

        @Test("me, followed_by across pages with next_url, recent_media with filters, get → data")
        func endpoints() async throws {
            let server = try await fixture().server
            let start = server.requests.count
            let result = try await runPython(
                Self.login + """
                    login('ig-token-1')
                    me = instagram.me()
                    followers = list(instagram.followed_by())
                    follows = list(instagram.follows(limit=7))
                    media = list(instagram.recent_media())
                    filters = {}
                    for m in media:
                        filters[m['filter']] = filters.get(m['filter'], 0) + 1
                    search = instagram.get('/users/search', params={'q': 'shayne'})
                    result = [me['username'], len(followers), len({f['id'] for f in followers}), len(follows), len(media),
                              all('images' in m and 'link' in m for m in media), sum(filters.values()), search[0]['username']]
                    """)
            #expect(
                result
                    == .list([
                        .string("shayne"), .int(50), .int(50), .int(7), .int(41), .bool(true), .int(41),
                        .string("shayne"),
                    ]))
            let pages = server.requests.dropFirst(start).filter { $0.path == "/instagram/v1/users/self/followed-by" }
            #expect(pages.count >= 3)
            #expect(pages.allSatisfy { $0.query["access_token"] == "ig-token-1" })
        }

        @Test("envelope errors map onto exceptions; the token never shows in them")
        func errors() async throws {
            let result = try await runPython(
                Self.login + """
                    out = []
                    for token, cls in (('ig-bad-token-x', apimacro.Unauthorized), ('ig-ratelimited', apimacro.RateLimited)):
                        login(token)
                        try:
                            instagram.me()
                        except cls as e:
                            out.append([type(e).__name__, e.status, token not in str(e) and token not in (e.url or ''),
                                        'access_token=REDACTED' in (e.url or ''), e.api])
                    login('ig-token-1')
                    try:
                        instagram.get('/users/999999')
                    except apimacro.NotFound as e:
                        out.append(['NotFound', 'this user does not exist' in str(e)])
                    result = out
                    """)
            #expect(
                result
                    == .list([
                        .list([.string("Unauthorized"), .int(400), .bool(true), .bool(true), .string("instagram")]),
                        .list([.string("RateLimited"), .int(429), .bool(true), .bool(true), .string("instagram")]),
                        .list([.string("NotFound"), .bool(true)]),
                    ]))
        }

        @Test("shortener: round trip, unknown short URL, and no request for a string that is not a URL")
        func shortener() async throws {
            let server = try await fixture().server
            let start = server.requests.count
            let result = try await runPython(
                """
                import apimacro
                from apimacro import shortener
                short = shortener.shorten('https://example.com/a/very/long/path?x=1')
                back = shortener.expand(short['id'])
                known = shortener.expand('https://goo.gl/fbsS')
                errors = []
                for bad in ('not a url', '', 'ftp://x/y'):
                    try:
                        shortener.shorten(bad)
                    except ValueError:
                        errors.append('ValueError')
                try:
                    shortener.expand('https://goo.gl/unknownX')
                except apimacro.NotFound as e:
                    errors.append('NotFound: ' + str(e).split(': ', 1)[-1])
                result = [short['id'].startswith('https://goo.gl/'), back['longUrl'], back['status'], known['longUrl'],
                          errors, 'AIza-test-key' not in repr(shortener)]
                """)
            #expect(
                result
                    == .list([
                        .bool(true), .string("https://example.com/a/very/long/path?x=1"), .string("OK"),
                        .string("http://www.google.com/"),
                        .list([
                            .string("ValueError"), .string("ValueError"), .string("ValueError"),
                            .string("NotFound: Not Found (notFound)"),
                        ]),
                        .bool(true),
                    ]))
            let posts = server.requests.dropFirst(start).filter {
                $0.method == "POST" && $0.path == "/urlshortener/v1/url"
            }
            #expect(posts.count == 1, "a string that is not a URL sends nothing")
            #expect(posts.first?.query["key"] == "AIza-test-key")
        }
    }
}
