import Foundation
import TestSupport
import Testing

/// `apimacro.shortener` on YOURLS through the binary, against the loopback server's YOURLS site
/// (`YOURLSRoutes`: the shapes of YOURLS's own source): shorten, expand, clicks, every page of
/// links, `api --paginate`, and hostile answers.
@Suite("the shortener on YOURLS through the binary")
struct YOURLSEndToEndTests {
    static let signature = "yourls-test-signature"

    /// The variables that point the shortener at the server's YOURLS site.
    static func yourls(_ server: TestServer, signature: String = signature) -> [String: String] {
        [
            "APIMACRO_SHORTENER": "yourls", "APIMACRO_SHORTENER_URL": server.baseURL + "/yourls",
            "APIMACRO_SHORTENER_KEY": signature,
        ]
    }

    @Test("YOURLS: shorten (new, existing, custom), expand, clicks, links to the end and stopping early")
    func methods() async throws {
        let server = try await TestServer.start()
        let (result, json) = try await ShortenerEndToEndTests.run(
            """
            import json
            from apimacro import shortener
            out = {"backend": shortener.backend}
            new = shortener.shorten("https://example.com/new")
            out["new"] = [new[k] for k in ("id", "longUrl", "created_at", "backend")]
            again = shortener.shorten("https://example.com/new")
            out["again"] = [again["id"], again["raw"]["status"], again["raw"]["code"]]
            custom = shortener.shorten("https://example.com/mine", slug="mine")
            out["custom"] = custom["id"]
            back = shortener.expand("https://sho.rt/s007")
            out["expand"] = [back["id"], back["longUrl"], back["created_at"]]
            out["clicks"] = [shortener.clicks("https://sho.rt/s042"), shortener.clicks(custom["id"])]
            every = list(shortener.links())
            out["links"] = [len(every), every[0]["id"], every[-1]["id"], every[-1]["created_at"], every[-1]["longUrl"]]
            out["limited"] = len(list(shortener.links(limit=51)))
            print(json.dumps(out))
            """, Self.yourls(server))
        let calls = ShortenerEndToEndTests.calls(server, under: "/yourls")
        try await server.shutdown()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!result.stdout.contains(Self.signature) && !result.stderr.contains(Self.signature))
        let out = try #require(json as? [String: Any], "\(result.stdout)")
        #expect(out["backend"] as? String == "yourls")
        #expect(
            ShortenerEndToEndTests.text(out["new"])
                == #"["https://sho.rt/1q","https://example.com/new","2026-11-29 09:00:00","yourls"]"#)
        // The site had the URL: YOURLS answers `fail` / `error:url` with the link, as Bitly's existing one.
        #expect(ShortenerEndToEndTests.text(out["again"]) == #"["https://sho.rt/1q","fail","error:url"]"#)
        #expect(out["custom"] as? String == "https://sho.rt/mine")
        #expect(
            ShortenerEndToEndTests.text(out["expand"])
                == #"["https://sho.rt/s007","https://example.com/page/007",null]"#)
        #expect(out["clicks"] as? [Int] == [42, 0])
        // 61 seeded + 2 made here, newest first; the last is the oldest seeded link.
        #expect(
            ShortenerEndToEndTests.text(out["links"])
                == #"[63,"https://sho.rt/mine","https://sho.rt/s001","2024-01-01 00:00:01","https://example.com/page/001"]"#
        )
        #expect(out["limited"] as? Int == 51)
        let pages = calls.filter { $0.contains("action=stats") }.map {
            $0.replacingOccurrences(of: "&signature=\(Self.signature)", with: "")
        }
        #expect(
            pages == [
                // Offsets by the one `Pagination.offset` rule: a short page ends the list.
                "GET /yourls/yourls-api.php?action=stats&filter=last&limit=50&start=0&format=json",
                "GET /yourls/yourls-api.php?action=stats&filter=last&limit=50&format=json&start=50",
                // limit=51: the second page's first item ends it.
                "GET /yourls/yourls-api.php?action=stats&filter=last&limit=50&start=0&format=json",
                "GET /yourls/yourls-api.php?action=stats&filter=last&limit=50&format=json&start=50",
            ], "\(pages)")
        #expect(calls.filter { $0.hasPrefix("POST /yourls/yourls-api.php?action=shorturl") }.count == 3)
    }

    @Test("hostile YOURLS answers are clear errors: JSON cut short, no link, a taken keyword, a refused signature")
    func hostile() async throws {
        let server = try await TestServer.start()
        let macro = """
            import json
            import apimacro
            from apimacro import shortener
            out = []
            for call in (lambda: shortener.expand("https://sho.rt/hostile-json"),
                         lambda: shortener.expand("https://sho.rt/hostile-missing"),
                         lambda: shortener.shorten("https://example.com/t", slug="taken"),
                         lambda: shortener.expand("https://sho.rt/nothing-here"),
                         lambda: shortener.shorten("https://example.com/t", tags=["x"]),
                         lambda: list(shortener.links())):
                try:
                    call()
                    out.append("no error")
                except (apimacro.APIError, ValueError) as e:
                    out.append(type(e).__name__ + ": " + str(e).split(" → ")[-1].split("yourls-api.php")[-1])
            print(json.dumps(out))
            """
        let (result, json) = try await ShortenerEndToEndTests.run(macro, Self.yourls(server))
        let (refused, refusedJSON) = try await ShortenerEndToEndTests.run(
            macro, Self.yourls(server, signature: "wrong-signature"))
        let (cut, cutJSON) = try await ShortenerEndToEndTests.run(
            macro, Self.yourls(server, signature: "yourls-hostile-signature"))
        try await server.shutdown()
        #expect(result.status == 0, "\(result.stderr)")
        let out = try #require(json as? [String], "\(result.stdout)")
        #expect(out.count == 6)
        #expect(
            out[0].hasPrefix("ParseError: ") && out[0].contains("answered 200 with a body that is not JSON"),
            "\(out[0])")
        #expect(
            out[1].hasPrefix("ParseError: ")
                && out[1].hasSuffix("did not answer with a short link (no shorturl or link.shorturl)"), "\(out[1])")
        #expect(
            out[2].hasPrefix("ParseError: ")
                && out[2].hasSuffix(
                    "did not answer with a short link (no shorturl or link.shorturl): Short URL taken already exists "
                        + "in database or is reserved (error:keyword)"),
            "\(out[2])")
        #expect(out[3].hasPrefix("NotFound: ") && out[3].hasSuffix("Error: short URL not found"), "\(out[3])")
        #expect(
            out[4] == "ValueError: shorten() argument 'tags' is not taken by YOURLS: it keeps no domains nor tags",
            "\(out[4])")
        #expect(out[5] == "no error")
        // A refused signature is Unauthorized, naming YOURLS's reason; the signature is never shown.
        let refusedOut = try #require(refusedJSON as? [String], "\(refused.stdout) \(refused.stderr)")
        #expect(
            refusedOut.allSatisfy {
                $0.hasPrefix("Unauthorized: ") && $0.hasSuffix("Invalid username or password")
                    || $0.hasPrefix("ValueError")
            }, "\(refusedOut)")
        #expect(!refused.stdout.contains("wrong-signature") && !refused.stderr.contains("wrong-signature"))
        // A listing whose page is cut short is a ParseError, not an empty list.
        let cutOut = try #require(cutJSON as? [String], "\(cut.stdout) \(cut.stderr)")
        #expect(
            cutOut.last?.hasPrefix("ParseError: ") == true && cutOut.last?.contains("a body that is not JSON") == true,
            "\(cutOut)")
    }

    @Test("api --paginate follows YOURLS's stats pages by their offsets, and auth status --check names no account")
    func apiAndCheck() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        let environment = Self.yourls(server)
        let api = try await space.run(
            "api", "shortener", "/yourls-api.php?action=stats&filter=last&limit=50&format=json", "--paginate",
            "--no-cache", environment: environment)
        let check = try await space.run("auth", "status", "--check", environment: environment)
        try await server.shutdown()
        #expect(api.status == 0, "\(api.stderr)")
        let pages = try #require(
            try JSONSerialization.jsonObject(with: Data(api.stdout.utf8)) as? [[String: Any]], "\(api.stdout)")
        #expect(pages.count == 2)
        #expect((pages.last?["links"] as? [String: Any])?.count == 11)
        #expect(!api.stdout.contains(Self.signature) && !api.stderr.contains(Self.signature))
        #expect(check.stdout.contains("the signature is accepted (YOURLS names no account)"), "\(check.stdout)")
        #expect(check.stdout.contains("61 links"), "\(check.stdout)")
    }
}
