import Foundation
import TestSupport
import Testing

/// Checking what came back (issue 40): `apimacro.check` and its helpers record named checks; a
/// failed one does not stop the macro but makes the run exit 1, printed at the end with what was
/// seen (redacted); `fatal=True` stops at once; `batch` shows the job as failed, with its checks.
@Suite("apimacro.check")
struct CheckTests {
    static let token = "ghp_checktoken0123456789"

    static func environment(_ server: TestServer) -> [String: String] {
        ["APIMACRO_GITHUB_URL": server.baseURL, "APIMACRO_GITHUB_TOKEN": token]
    }

    @Test("checks that pass: exit 0, nothing printed about them; check() returns the outcome")
    func passing() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        try space.write(
            "ok.py",
            """
            import apimacro
            def main():
                r = apimacro.request("GET", "\(server.baseURL)/users/octocat")
                assert apimacro.check_status(r, 200) is True
                assert apimacro.check_equal("login", r.json()["login"], "octocat")
                assert apimacro.check_in("type", r.json().get("type"), ("User", "Organization"))
                assert apimacro.check("has id", "id" in r.json(), seen=r.json().get("id"))
                print("done")
            """)
        let result = try await space.run("run", "ok.py")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "done\n")
        #expect(!result.stderr.contains("check"), "\(result.stderr)")
        try await server.shutdown()
    }

    @Test("a failed check: the macro goes on, exit 1, each failure printed with what was seen, redacted")
    func failing() async throws {
        let space = try Workspace()
        defer { space.remove() }
        try space.write(
            "bad.py",
            """
            import os, apimacro
            def main():
                apimacro.check_equal("count", 3, 4)
                apimacro.check("token echoed", False, seen={"auth": os.environ["APIMACRO_GITHUB_TOKEN"]})
                apimacro.check("escape", False, seen="a\\x1b[31mred")
                apimacro.check("fine", True)
                print("still running")
            """)
        let result = try await space.run("run", "bad.py", environment: ["APIMACRO_GITHUB_TOKEN": Self.token])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stdout == "still running\n")
        #expect(result.stderr.contains("3 checks failed"), "\(result.stderr)")
        #expect(result.stderr.contains("FAILED count: seen 3 (expected 4)"), "\(result.stderr)")
        #expect(result.stderr.contains("FAILED token echoed: seen {'auth': 'REDACTED'}"), "\(result.stderr)")
        #expect(!result.stderr.contains(Self.token))
        #expect(!result.stderr.contains("\u{1B}"), "control characters escaped")
        #expect(!result.stderr.contains("fine"))
    }

    @Test("fatal=True: stops the macro at once with CheckFailed naming the check; exit 1")
    func fatal() async throws {
        let space = try Workspace()
        defer { space.remove() }
        try space.write(
            "fatal.py",
            """
            import apimacro
            def main():
                apimacro.check_status(type("R", (), {"status": 404, "url": "http://x/"})(), 200, fatal=True)
                print("not reached")
            """)
        let result = try await space.run("run", "fatal.py")
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stdout == "")
        #expect(result.stderr.contains("CheckFailed: check 'status of http://x/' failed: seen 404 (expected 200)"))
        // A macro may catch it as any exception.
        try space.write(
            "caught.py",
            """
            import apimacro
            def main():
                try:
                    apimacro.check("x", False, fatal=True)
                except apimacro.CheckFailed as error:
                    print("caught", error)
            """)
        let caught = try await space.run("run", "caught.py")
        #expect(caught.status == 1, "the check still failed: \(caught.stderr)")
        #expect(caught.stdout == "caught check 'x' failed\n")
    }

    @Test("batch: a job with a failed check is failed, its checks in its output; the others pass")
    func inBatch() async throws {
        let space = try Workspace()
        defer { space.remove() }
        try space.write("good.py", "import apimacro\napimacro.check('one', 1 == 1)\n")
        try space.write("bad.py", "import apimacro\napimacro.check_equal('answer', 41, 42)\n")
        let result = try await space.run("batch", "good.py", "bad.py")
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        let all = result.stdout + result.stderr
        #expect(all.contains("FAILED answer: seen 41 (expected 42)"), "\(all)")
        let summary = all.split(separator: "\n").filter { $0.contains("bad") || $0.contains("good") }
        #expect(summary.contains { $0.contains("bad") && $0.lowercased().contains("fail") }, "\(all)")
        #expect(summary.contains { $0.contains("good") && $0.lowercased().contains("ok") }, "\(all)")
    }
}
