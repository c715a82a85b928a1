import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("apimacro repl on a pseudo-terminal", .serialized)
struct ReplTests {
    static let prompt = ">>> "

    /// Starts `apimacro repl` on a pty and waits for the first prompt.
    static func start(_ space: Workspace, environment: [String: String] = [:]) async throws -> PseudoTerminal {
        let terminal = try PseudoTerminal(["repl"], in: space.url, environment: environment)
        try await terminal.expect(prompt, timeout: 60)
        return terminal
    }

    /// Types a line and waits for the prompt that follows its result; returns the output in between.
    @discardableResult
    static func enter(_ line: String, on terminal: PseudoTerminal) async throws -> String {
        let start = terminal.count
        terminal.type(line + "\r")
        let end = try await terminal.expect("\r\n" + prompt, after: start)
        let text = terminal.output.utf8
        return String(decoding: Array(text)[start..<end], as: UTF8.self)
    }

    @Test("a call, a :run whose sys.exit stays in the REPL, and an exception that keeps the variables")
    func callRunAndException() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "macros/hello.py": "import sys\nprint('hello from', sys.argv[1:])\nsys.exit(3)\n"
        ])
        defer { space.remove() }
        let terminal = try await Self.start(space, environment: ["APIMACRO_GITHUB_URL": server.baseURL])
        defer { terminal.close() }
        #expect(terminal.output.contains("github, instagram, shortener and apimacro are imported"))

        try await Self.enter("user = github.user('octocat')", on: terminal)
        let login = try await Self.enter("print(user['login'], user['id'])", on: terminal)
        #expect(login.contains("octocat 583231\r\n"), "\(login)")

        let run = try await Self.enter(":run hello a 'b c'", on: terminal)
        #expect(run.contains("hello from ['a', 'b c']\r\n"), "\(run)")
        #expect(run.contains("[hello exited 3]"), "\(run)")

        let failure = try await Self.enter("user['login'] / 2", on: terminal)
        #expect(failure.contains("Traceback (most recent call last):"), "\(failure)")
        #expect(failure.contains("TypeError: unsupported operand type(s) for /: 'str' and 'int'"), "\(failure)")

        let after = try await Self.enter("print(user['login'].upper(), apimacro.__name__)", on: terminal)
        #expect(after.contains("OCTOCAT apimacro\r\n"), "\(after)")

        terminal.type("\u{04}")
        #expect(try await terminal.waitForExit() == 0)
        try await server.shutdown()
    }

    /// Issue 24: 1e300 seconds trapped (SIGILL) where it became a `Duration`, and the session was lost.
    @Test("apimacro.sleep(1e300) is an OverflowError and the session goes on")
    func hugeSleepKeepsTheSession() async throws {
        let space = try Workspace()
        defer { space.remove() }
        let terminal = try await Self.start(space)
        defer { terminal.close() }
        try await Self.enter("kept = 'still here'", on: terminal)
        let failure = try await Self.enter("apimacro.sleep(1e300)", on: terminal)
        #expect(failure.contains("OverflowError: sleep() argument 'seconds' is too long"), "\(failure)")
        let negative = try await Self.enter("apimacro.sleep(-1)", on: terminal)
        #expect(negative.contains("ValueError"), "\(negative)")
        let after = try await Self.enter("print(kept)", on: terminal)
        #expect(after.contains("still here\r\n"), "\(after)")
        terminal.type("\u{04}")
        #expect(try await terminal.waitForExit() == 0)
    }

    @Test("Ctrl-C during a slow request cancels it and returns to the prompt")
    func interruptSlowRequest() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        let terminal = try await Self.start(space)
        defer { terminal.close() }
        try await Self.enter("kept = 'still here'", on: terminal)
        let start = terminal.count
        terminal.type("apimacro.get(\(String(reflecting: server.baseURL + "/slow?ms=120000")))\r")
        // Wait until the request has reached the server, so Ctrl-C lands during the wait.
        let deadline = Date().addingTimeInterval(600)
        while !server.requests.contains(where: { $0.path == "/slow" }) && Date() < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        try #require(server.requests.contains { $0.path == "/slow" })
        let before = terminal.count
        terminal.type("\u{03}")
        // Uncancelled, the request would wait for its 30 s timeout: the prompt within
        // 15 s shows the wait was cancelled, with a margin load cannot eat.
        let end = try await terminal.expect("\r\n" + Self.prompt, after: before, timeout: 15)
        let shown = String(decoding: Array(terminal.output.utf8)[start..<end], as: UTF8.self)
        #expect(shown.contains("KeyboardInterrupt"), "\(shown)")
        #expect(!shown.contains("NetworkError"), "\(shown)")
        let alive = try await Self.enter("print(kept)", on: terminal)
        #expect(alive.contains("still here\r\n"))
        terminal.type(":quit\r")
        #expect(try await terminal.waitForExit() == 0)
        try await server.shutdown()
    }

    @Test("history is kept in $APIMACRO_HOME/history (mode 0600, the folder 0700) across two sessions")
    func history() async throws {
        let space = try Workspace()
        defer { space.remove() }
        let home = space.url.appendingPathComponent("home")
        let environment = ["APIMACRO_HOME": home.path]
        let first = try await Self.start(space, environment: environment)
        defer { first.close() }
        try await Self.enter("print('remember' + '-me')", on: first)
        first.type(":quit\r")
        #expect(try await first.waitForExit() == 0)
        let file = home.appendingPathComponent("history")
        let saved = try String(contentsOf: file, encoding: .utf8)
        #expect(saved.contains("print('remember' + '-me')"), "\(saved)")
        let mode = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        // The folder the REPL created is owner-only too (it holds tokens and history).
        let folderMode = try FileManager.default.attributesOfItem(atPath: home.path)[.posixPermissions] as? Int
        #expect(folderMode == 0o700, "APIMACRO_HOME created with mode \(String(folderMode ?? 0, radix: 8))")

        let second = try await Self.start(space, environment: environment)
        defer { second.close() }
        // Ctrl-P twice: back past the first session's `:quit` to its print line, then Enter.
        let start = second.count
        second.type("\u{10}\u{10}\r")
        let end = try await second.expect("\r\n" + Self.prompt, after: start)
        let shown = String(decoding: Array(second.output.utf8)[start..<end], as: UTF8.self)
        #expect(shown.contains("remember-me\r\n"), "\(shown)")
        second.type("\u{04}")
        #expect(try await second.waitForExit() == 0)
    }

    @Test("Tab completes github.us to github.user( and :ru to :run")
    func completion() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        let terminal = try await Self.start(space, environment: ["APIMACRO_GITHUB_URL": server.baseURL])
        defer { terminal.close() }
        let start = terminal.count
        terminal.type("github.us\t")
        try await terminal.expect("github.user(", after: start)
        let result = try await Self.enter("'octocat')['login']", on: terminal)
        #expect(result.contains("'octocat'\r\n"), "\(result)")
        let command = terminal.count
        terminal.type(":ru\t")
        try await terminal.expect(":run ", after: command)
        terminal.type("\u{15}:quit\r")  // Ctrl-U clears the line first
        #expect(try await terminal.waitForExit() == 0)
        try await server.shutdown()
    }

    /// Issue 27, friction 1: `:run` ran every atexit handler, rlcompleter's among them, which
    /// clears the completer, so Tab did nothing for the rest of the session.
    @Test("Tab still completes after :run, the macro's atexit handlers run at its end and the session's wait")
    func completionAfterRun() async throws {
        let space = try Workspace(files: [
            "macros/bye.py": "import atexit\natexit.register(print, 'macro handler ran')\nprint('macro body')\n"
        ])
        defer { space.remove() }
        let terminal = try await Self.start(space)
        defer { terminal.close() }
        try await Self.enter("import atexit; atexit.register(print, 'session handler ran')", on: terminal)
        let run = try await Self.enter(":run bye", on: terminal)
        #expect(run.contains("macro body\r\nmacro handler ran\r\n"), "\(run)")
        #expect(!run.contains("session handler ran"), "\(run)")
        let start = terminal.count
        terminal.type("github.us\t")
        try await terminal.expect("github.user(", after: start)
        terminal.type("\u{15}")
        let again = try await Self.enter(":run bye", on: terminal)
        #expect(again.contains("macro handler ran"), "\(again)")
        let second = terminal.count
        terminal.type("apimacro.outp\t")
        try await terminal.expect("apimacro.output(", after: second)
        terminal.type("\u{15}:quit\r")
        try await terminal.expect("session handler ran", after: second)
        #expect(try await terminal.waitForExit() == 0)
    }
}

@Suite("apimacro repl fed from stdin")
struct ReplScriptTests {
    @Test("lines from a file run with no prompt; errors keep the session; the exit code says one failed")
    func script() async throws {
        let space = try Workspace(files: ["macros/two.py": "print('two says', 2)\n"])
        defer { space.remove() }
        let session = """
            x = 20
            1 / 0
            def double(n):
                return n * 2

            print(double(x) + 2)
            :run two
            :format csv
            apimacro.output([{"a": 1, "b": "c"}])
            :nosuch
            :quit
            print("after quit")
            """
        let result = try await space.run("repl", stdin: session + "\n")
        #expect(result.status == 1, "\(result.stderr)")
        #expect(
            result.stdout == "42\ntwo says 2\napimacro.output prints csv from now on.\na,b\n1,c\n", "\(result.stdout)")
        #expect(result.stderr.contains("ZeroDivisionError: division by zero"))
        #expect(result.stderr.contains("apimacro: no command ':nosuch' (see :help)"))
        #expect(!result.stdout.contains(">>>"))

        let clean = try await space.run("repl", stdin: "print('ok')\n")
        #expect(clean.status == 0)
        #expect(clean.stdout == "ok\n")
    }

    @Test(":verbose on prints one line per exchange, :verbose off stops them")
    func verbose() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        let session = """
            github.user("octocat")["login"]
            :verbose on
            github.user("many")["login"]
            :verbose off
            github.user("octocat")["id"]
            """
        let result = try await space.run(
            "repl", environment: ["APIMACRO_GITHUB_URL": server.baseURL], stdin: session + "\n")
        try await server.shutdown()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "'octocat'\nverbose on.\n'many'\nverbose off.\n583231\n")
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(result.stderr)")
        #expect(lines.first?.hasPrefix("apimacro: GET \(server.baseURL)/users/many 200 ") == true, "\(result.stderr)")
    }
}
