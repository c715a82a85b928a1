import Foundation
import Testing
import WebAPI

@Suite("pure pieces of the pipeline: links, retries, rate limits, origins")
struct PolicyTests {
    @Test("Link headers: GitHub's format, several relations, commas inside quotes")
    func linkHeader() {
        let header =
            #"<https://api.github.com/repositories/1000/issues?per_page=3&page=2>; rel="next", <https://api.github.com/repositories/1000/issues?per_page=3&page=5>; rel="last""#
        let links = LinkHeader.parse(header)
        #expect(links["next"] == "https://api.github.com/repositories/1000/issues?per_page=3&page=2")
        #expect(links["last"] == "https://api.github.com/repositories/1000/issues?per_page=3&page=5")
        #expect(
            LinkHeader.next(#"<http://a/1>; rel="prev first", <http://a/3>; title="x, y"; rel="next""#) == "http://a/3")
        #expect(LinkHeader.next(#"<http://a/1>; rel="prev""#) == nil)
        #expect(LinkHeader.next("garbage <unclosed") == nil)
        #expect(LinkHeader.next(nil) == nil)
        // Found by fuzzing: an empty target would send the iterator back to the same page forever.
        #expect(LinkHeader.next(#"<>; rel="next""#) == nil)
        #expect(LinkHeader.parse("< >; rel=next, <http://a/2>; rel=last") == ["last": "http://a/2"])
    }

    @Test("retry backoff doubles with full jitter, capped, and stops after max retries")
    func retryPolicy() {
        let policy = RetryPolicy(maxRetries: 3, baseDelay: 0.2, maxDelay: 0.5)
        #expect(policy.delay(attempt: 1, random: { 0.999 })! < 0.2)
        #expect(policy.delay(attempt: 2, random: { 0.5 }) == 0.2)
        #expect(policy.delay(attempt: 3, random: { 1.0 }) == 0.5)
        #expect(policy.delay(attempt: 4, random: { 0.5 }) == nil)
        #expect(policy.delay(attempt: 1, random: { 0 }) == 0)
    }

    func response(_ status: Int, _ headers: [(String, String)]) -> Response {
        Response(status: status, headers: Headers(headers), body: [], url: "https://api.github.com/x")
    }

    @Test("rate limits: retry-after, reset time, the max wait, and what is not a rate limit")
    func rateLimitPolicy() {
        let policy = RateLimitPolicy(maxWait: 60)
        let now = 1_700_000_000.0
        #expect(policy.decide(response(429, [("retry-after", "5")]), now: now, canRetry: true) == .wait(5))
        #expect(
            policy.decide(
                response(403, [("x-ratelimit-remaining", "0"), ("x-ratelimit-reset", "1700000010")]), now: now,
                canRetry: true)
                == .wait(11))
        #expect(
            policy.decide(
                response(403, [("x-ratelimit-remaining", "0"), ("x-ratelimit-reset", "1700003600")]), now: now,
                canRetry: true)
                == .fail(retryAfter: 3601, resetAt: 1_700_003_600))
        #expect(
            policy.decide(response(429, [("retry-after", "5")]), now: now, canRetry: false)
                == .fail(retryAfter: 5, resetAt: nil))
        #expect(policy.decide(response(403, [("x-ratelimit-remaining", "10")]), now: now, canRetry: true) == .proceed)
        #expect(policy.decide(response(403, []), now: now, canRetry: true) == .proceed)
        #expect(policy.decide(response(200, [("retry-after", "5")]), now: now, canRetry: true) == .proceed)
        #expect(policy.decide(response(429, []), now: now, canRetry: true) == .fail(retryAfter: nil, resetAt: nil))
    }

    @Test(
        "a hostile retry-after (1e300, inf, a reset centuries away) is a wait of at most 366 days, in whole seconds an Int"
    )
    func hostileRetryAfterBounded() {
        let policy = RateLimitPolicy(maxWait: 60)
        let now = 1_700_000_000.0
        for headers in [
            [("retry-after", "1e300")], [("retry-after", "inf")], [("retry-after", "Infinity")],
            [("x-ratelimit-remaining", "0"), ("x-ratelimit-reset", "9223372036854775807")],
        ] {
            guard case .fail(let retryAfter?, _, _) = policy.decide(response(429, headers), now: now, canRetry: true)
            else {
                Issue.record("\(headers): not a failure with a wait")
                continue
            }
            // RateLimitStage's message shows Int(retryAfter.rounded(.up)): 1e300 or inf trapped there.
            #expect(retryAfter <= RateLimitPolicy.longestWait, "\(headers): \(retryAfter)")
            #expect(Int(exactly: retryAfter.rounded(.up)) != nil, "\(headers)")
        }
        #expect(
            policy.decide(response(429, [("retry-after", "nan")]), now: now, canRetry: true)
                == .fail(retryAfter: nil, resetAt: nil))
    }

    @Test("origins: loopback hosts, default ports, what may carry credentials")
    func origins() throws {
        #expect(try #require(Origin(url: "http://127.0.0.5:8080/x")).isLoopback)
        #expect(try #require(Origin(url: "http://localhost/x")).isSecureForCredentials)
        #expect(try #require(Origin(url: "http://[::1]:9/x")).isLoopback)
        #expect(try #require(Origin(url: "https://api.github.com")).isSecureForCredentials)
        #expect(try #require(Origin(url: "http://api.github.com")).isSecureForCredentials == false)
        #expect(try #require(Origin(url: "http://127.0.0.1.evil.com/")).isLoopback == false)
        #expect(Origin(url: "https://api.github.com") == Origin(url: "https://API.github.com:443/users"))
        #expect(Origin(url: "not a url") == nil)
    }

    @Test("the credential stage allows only the client's own origin over https or loopback")
    func credentialScope() {
        let https = CredentialStage(credential: .bearer(Secret("t")), baseURL: "https://api.github.com")
        #expect(https.allows("https://api.github.com/users/x"))
        #expect(!https.allows("https://evil.example/users/x"))
        #expect(!https.allows("http://api.github.com/users/x"))
        #expect(!https.allows("https://api.github.com:8443/users/x"))
        let plain = CredentialStage(credential: .bearer(Secret("t")), baseURL: "http://api.example.com")
        #expect(!plain.allows("http://api.example.com/x"), "never over plain http to a non-loopback host")
        let loopback = CredentialStage(credential: .bearer(Secret("t")), baseURL: "http://127.0.0.1:8080")
        #expect(loopback.allows("http://127.0.0.1:8080/x"))
        #expect(!loopback.allows("http://127.0.0.2:8080/x"))
    }

    @Test("secrets print as REDACTED; URLs lose credential parameters and passwords")
    func redaction() {
        let secret = Secret("ghp_supersecret")
        #expect("\(secret)" == "REDACTED")
        #expect(String(reflecting: secret) == "REDACTED")
        #expect("\(Credential.query(name: "key", value: secret))" == "query key=REDACTED")
        let redactor = Redactor(secrets: ["ghp_supersecret", "a b/c"])
        #expect(redactor.redact("token ghp_supersecret!") == "token REDACTED!")
        #expect(redactor.redact("q=a%20b%2Fc") == "q=REDACTED")
        #expect(
            redactor.redactURL("https://u:pw@api.example.com/v1/x?access_token=abc&q=1&KEY=zzz")
                == "https://REDACTED@api.example.com/v1/x?access_token=REDACTED&q=1&KEY=REDACTED")
    }

    @Test("redaction's ASCII shortcut finds what Foundation's search finds, no more and no less")
    func redactionShortcut() {
        // The shortcut returns an ASCII text holding no secret as it is; every other text goes
        // through Foundation's search. The reference is that search alone (and, for a secret under
        // 4 characters, a regular expression for the same characters as a word of its own).
        func reference(_ text: String, _ secrets: [String]) -> String {
            var result = text
            for secret in secrets.sorted(by: { $0.count > $1.count }) {
                let escaped = FormEncoding.escape(secret)
                for form in [secret] + (escaped != secret ? [escaped] : []) {
                    guard form.count < 4 else {
                        result = result.replacingOccurrences(of: form, with: "REDACTED")
                        continue
                    }
                    let pattern = "(?<![A-Za-z0-9])" + NSRegularExpression.escapedPattern(for: form) + "(?![A-Za-z0-9])"
                    result = result.replacingOccurrences(of: pattern, with: "REDACTED", options: .regularExpression)
                }
            }
            return result
        }
        let secretSets = [
            ["ghp_abcdEFGH1234"], ["ghp_abcdEFGH1234", "a b/c"], ["p\u{e9}ss-word"], ["Kelvin-token-12"],
            ["\u{212A}elvin-token-12"], ["abc"],
        ]
        let texts = [
            "https://api.github.com/users/octocat", "token ghp_abcdEFGH1234!", "ghp_abcdEFGH123",
            "ghp_abcdEFGH1234ghp_abcdEFGH1234", "q=a%20b%2Fc&x=a b/c", "p\u{e9}ss-word and pe\u{301}ss-word",
            "\u{212A}elvin-token-12 and Kelvin-token-12", "", "abc abcd", "x\r\nKelvin-token-12\r\n",
        ]
        for secrets in secretSets {
            let redactor = Redactor(secrets: secrets)
            for text in texts {
                #expect(redactor.redact(text) == reference(text, secrets), "\(secrets) in \(text.debugDescription)")
                #expect(
                    redactor.redact(bytes: Array(text.utf8)) == Array(reference(text, secrets).utf8),
                    "\(secrets) in \(text.debugDescription)")
            }
        }
    }

    @Test("a secret holding a NUL is redacted, and a text ending with its start does not end the process")
    func redactionOfNUL() {
        // Foundation's search traps on "...abc" against "abc\0" (found by the RedirectURL fuzzer:
        // a pasted redirect's access_token=i%00%00%00 and an error message ending in "i").
        let redactor = Redactor(secrets: ["abc\u{0}", "ghp_abcdEFGH1234", "i\u{0}\u{0}\u{0}"])
        for text in ["x abc", "\u{e9} abc", "ghp_abcdEFGH1234 then abc", "\u{e9}i", "i", "ab", "", "\u{0}"] {
            let expected = text.replacingOccurrences(of: "ghp_abcdEFGH1234", with: "REDACTED")
            #expect(redactor.redact(text) == expected, "\(text.debugDescription)")
            #expect(redactor.redact(bytes: Array(text.utf8)) == Array(expected.utf8), "\(text.debugDescription)")
        }
        #expect(redactor.redact("\u{e9} abc\u{0} and i\u{0}\u{0}\u{0}!") == "\u{e9} REDACTED and REDACTED!")
        #expect(redactor.redact("q=abc%00&r=i%00%00%00") == "q=REDACTED&r=REDACTED")
        #expect(redactor.redact("ghp_abcdEFGH1234 abc\u{0}") == "REDACTED REDACTED")
    }

    @Test("percent-encoding on the bytes gives what Foundation's addingPercentEncoding gives")
    func percentEncoding() {
        let unreserved = CharacterSet(
            charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        let texts = [
            "", "octocat", "a b/c", "~user_1.2-x", "100%", "é", "e\u{301}", "日本語", "👩‍💻", "?q=1&x=2#f", "..", ".",
            "\u{0}\u{7f}\u{80}", "+ =;:@!*'()[]", "\u{212A}elvin",
        ]
        for text in texts {
            let foundation = text.addingPercentEncoding(withAllowedCharacters: unreserved)
            #expect(FormEncoding.escape(text) == foundation, "\(text.debugDescription)")
        }
        #expect(FormEncoding.pathSegment("..") == "%2E%2E")
        #expect(FormEncoding.pathSegment("a/b") == "a%2Fb")
    }

    @Test("API errors keep at most 4 KiB of body, cut on a character boundary")
    func bodyTruncation() {
        let error = APIError(.http, "x", body: String(repeating: "é", count: 3000))
        #expect(error.body?.utf8.count ?? 0 <= 4096)
        #expect(error.body?.count == 2048)
    }
}
