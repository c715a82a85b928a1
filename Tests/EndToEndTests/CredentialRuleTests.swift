import Foundation
import TestSupport
import Testing

/// Issue 24 item 6: one rule decides which header and query-parameter names carry credentials,
/// and every writer uses it: HAR files, `-v` lines, error messages and tracebacks.
@Suite("one credential rule for every writer", .serialized)
struct CredentialRuleTests {
    /// Credentials a macro writes itself (no variable holds them, so only their names betray them).
    static let query = [
        ("private_token", "pt-SECRET-query-1"), ("api-key", "ak-SECRET-query-2"),
        ("signature", "sg-SECRET-query-3"), ("auth", "au-SECRET-query-4"),
    ]
    static let headers = [
        ("Private-Token", "pv-SECRET-header-5"), ("X-Auth-Token", "xa-SECRET-header-6"),
        ("X-Vault-Token", "vt-SECRET-header-7"),
    ]
    static var secrets: [String] { (query + headers).map(\.1) }

    @Test("credentials the rule names are REDACTED in the HAR file, -v lines, error messages and the traceback")
    func everyWriter() async throws {
        let server = try await TestServer.start()
        func dict(_ pairs: [(String, String)]) -> String {
            "{" + pairs.map { "'\($0.0)': '\($0.1)'" }.joined(separator: ", ") + "}"
        }
        let space = try Workspace(files: [
            "probe.py": """
            import apimacro
            base = \(String(reflecting: server.baseURL))
            query = \(dict(Self.query))
            headers = \(dict(Self.headers))
            print(apimacro.get(base + '/echo/q', params=dict(query, page='2'), headers=headers).status)
            try:
                apimacro.get(base + '/hostile/echo-status/404', params=query, headers=headers)
            except apimacro.NotFound as e:
                print(str(e))
                print(repr(e))
                print(e.url)
                print(e.body)
            apimacro.get(base + '/status/404', params=query, headers=headers)
            """
        ])
        defer { space.remove() }
        let run = try await space.run("run", "-v", "--record", "probe.har", "probe.py")
        let replay = try await space.run("run", "--replay", "probe.har", "probe.py")
        try await server.shutdown()

        #expect(run.status == 1, "\(run.stderr)")
        let har = try String(contentsOf: space.url.appendingPathComponent("probe.har"), encoding: .utf8)
        let written = ["stdout": run.stdout, "stderr": run.stderr, "HAR": har, "replay": replay.stdout + replay.stderr]
        for (writer, text) in written {
            for secret in Self.secrets { #expect(!text.contains(secret), "\(secret) in \(writer):\n\(text)") }
        }
        // The -v lines and the messages name the parameters, valued REDACTED; the rest stays readable.
        #expect(run.stderr.contains("private_token=REDACTED&api-key=REDACTED&signature=REDACTED&auth=REDACTED"))
        #expect(run.stderr.contains("page=2"))
        #expect(run.stdout.contains("private_token=REDACTED"), "\(run.stdout)")
        #expect(har.contains("\"Private-Token\"") && har.contains("auth=REDACTED"))
        // The recording still answers the same requests (the redacted parameters are left out of the match).
        #expect(replay.status == 1 && replay.stdout.hasPrefix("200\n"), "\(replay.stdout)\(replay.stderr)")
    }
}
