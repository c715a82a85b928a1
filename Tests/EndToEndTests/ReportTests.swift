import Foundation
import TestSupport
import Testing

/// Reports people look at (issue 40): `run --report` and `batch --report` as HTML (a page with a
/// request waterfall, checked in headless Chromium through its DevTools protocol), TAP (parsed
/// by tap.py) and JSON (validated against docs/report.schema.json with jsonschema);
/// `apimacro report FILE.har`; the HAR's timings; and batch's tags, --bail and --each.
@Suite("Reports", .timeLimit(.minutes(10)))
struct ReportTests {
    static let token = "ghp_reporttoken0123456789"
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Reports")
    static let schema = folder.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("docs/report.schema.json")

    /// What `browser_check.py` saw of a page.
    struct Seen: Decodable {
        struct Bar: Decodable {
            var time: Double
            var width: Double
            var track: Double
            var url: String
            var row: String
        }
        struct LastRow: Decodable {
            var url: String
            var index: Int
            var rows: Int
        }
        var bars: [Bar]
        var rows: Int
        var text: String
        var failedChecks: [String]
        var details: String?
        var lastRow: [LastRow]
        var console: [String]
    }

    /// Runs a command to its end: its status and what it printed.
    static func tool(_ executable: String, _ arguments: [String]) async throws -> (
        status: Int32, stdout: String, stderr: String
    ) {
        let folder = FileManager.default.temporaryDirectory
        let out = folder.appendingPathComponent("report-tool-\(UUID().uuidString).out")
        let err = folder.appendingPathComponent("report-tool-\(UUID().uuidString).err")
        defer {
            try? FileManager.default.removeItem(at: out)
            try? FileManager.default.removeItem(at: err)
        }
        var environment = ProcessInfo.processInfo.environment
        for name in environment.keys where name.hasPrefix("PYTHON") || name == "VIRTUAL_ENV" {
            environment[name] = nil
        }
        let process = try Spawned(
            executable, arguments, environment: environment, stdout: .file(out.path), stderr: .file(err.path))
        let exit = await process.exit()
        return (
            exit.signalled ? 128 + exit.status : exit.status, (try? String(contentsOf: out, encoding: .utf8)) ?? "",
            (try? String(contentsOf: err, encoding: .utf8)) ?? ""
        )
    }

    /// The page `file` as headless Chromium shows it (`Reports/browser_check.py`).
    static func browse(_ file: URL, openRow: Bool = false) async throws -> Seen {
        let arguments =
            [folder.appendingPathComponent("browser_check.py").path, "/usr/bin/chromium", file.path]
            + (openRow ? ["--open-row"] : [])
        let run = try await tool("/usr/bin/python3", arguments)
        #expect(run.status == 0, "\(run.stderr)")
        return try JSONDecoder().decode(Seen.self, from: Data(run.stdout.utf8))
    }

    /// Each bar is as wide as its exchange's share of the waterfall's span (1.5 px for rounding
    /// and the 1 px a bar is at least).
    static func expectProportional(_ bars: [Seen.Bar], span: Double) {
        for bar in bars {
            let expected = bar.time / span * bar.track
            #expect(abs(bar.width - max(expected, 1)) <= 1.5, "bar of \(bar.url): \(bar.width) px, not \(expected)")
        }
    }

    /// The tools venv's python (tap.py, jsonschema).
    static func venvPython() async throws -> String {
        try await PythonTools.virtualEnvironment().appendingPathComponent("bin/python").path
    }

    /// Parses TAP with tap.py: each line's kind, ok, number and YAML diagnostics, or the parse errors.
    static func parseTAP(_ file: URL) async throws -> [[String: Any]] {
        let script = """
            import json, sys
            from tap.parser import Parser
            out = []
            for line in Parser().parse_file(sys.argv[1]):
                item = {"category": line.category}
                if line.category == "test":
                    item.update(ok=line.ok, number=line.number, description=line.description,
                                skip=line.skip, yaml=line.yaml_block)
                elif line.category == "unknown":
                    item["text"] = line.text
                elif line.category == "plan":
                    item["expected"] = line.expected_tests
                elif line.category == "version":
                    item["version"] = line.version
                out.append(item)
            json.dump(out, sys.stdout, default=str)
            """
        let run = try await tool(try await venvPython(), ["-c", script, file.path])
        #expect(run.status == 0, "\(run.stderr)")
        let lines = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [[String: Any]] ?? []
        #expect(!lines.contains { $0["category"] as? String == "unknown" }, "lines tap.py does not know: \(lines)")
        return lines
    }

    /// Validates a JSON report against docs/report.schema.json; the errors, none when valid.
    static func schemaErrors(_ file: URL) async throws -> String {
        let script = """
            import json, sys
            from jsonschema import Draft202012Validator
            schema = json.load(open(sys.argv[1]))
            Draft202012Validator.check_schema(schema)
            validator = Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
            errors = [f"{list(e.path)}: {e.message}" for e in validator.iter_errors(json.load(open(sys.argv[2])))]
            print("\\n".join(errors))
            """
        let run = try await tool(try await venvPython(), ["-c", script, schema.path, file.path])
        #expect(run.status == 0, "\(run.stderr)")
        return run.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func json(_ file: URL) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any] ?? [:]
    }

    @Test("run --report .html/.json/.tap: one bar per exchange in proportion, a failed check shown, no secret")
    func runReportInBrowser() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        try space.write(
            "look.py",
            """
            import os, apimacro
            from apimacro import github
            def main():
                for name in ("octocat", "octocat", "octocat"):
                    user = github.user(name)
                apimacro.check_equal("login", user["login"], "nobody")
                apimacro.check("token kept", True, seen=os.environ["APIMACRO_GITHUB_TOKEN"])
                print("the token is", os.environ["APIMACRO_GITHUB_TOKEN"])
            """)
        let environment = ["APIMACRO_GITHUB_URL": server.baseURL, "APIMACRO_GITHUB_TOKEN": Self.token]
        let result = try await space.run(
            "run", "--report", "out/page.html", "--report", "out/report.json", "--report", "out/report.tap",
            "look.py", environment: environment)
        #expect(result.status == 1, "a failed check fails the run: \(result.stderr)")
        #expect(result.stdout == "the token is REDACTED\n", "\(result.stdout)")
        #expect(result.stderr.contains("FAILED login"), "\(result.stderr)")
        let page = space.url.appendingPathComponent("out/page.html")
        let html = try String(contentsOf: page, encoding: .utf8)
        #expect(!html.contains(Self.token))
        #expect(!html.contains("<script src") && !html.contains("<link rel=\"stylesheet\""), "self-contained")

        let report = try Self.json(space.url.appendingPathComponent("out/report.json"))
        #expect(try await Self.schemaErrors(space.url.appendingPathComponent("out/report.json")) == "")
        let job = try #require((report["jobs"] as? [[String: Any]])?.first)
        let exchanges = try #require(job["exchanges"] as? [[String: Any]])
        #expect(exchanges.count == 3, "\(exchanges)")

        let seen = try await Self.browse(page, openRow: true)
        #expect(seen.console.isEmpty, "console errors: \(seen.console)")
        #expect(seen.bars.count == exchanges.count, "one bar per exchange")
        #expect(seen.bars.map(\.url) == exchanges.compactMap { $0["url"] as? String })
        let span = exchanges.map { ($0["start"] as? Double ?? 0) + ($0["time"] as? Double ?? 0) }.max() ?? 1
        Self.expectProportional(seen.bars, span: span)
        #expect(
            seen.failedChecks == ["✗ FAILED login — seen 'octocat' (expected 'nobody')"], "\(seen.failedChecks)")
        #expect(seen.text.contains("the token is REDACTED"), "the output is shown")
        #expect(!seen.text.contains(Self.token), "no secret in the page's text")
        let details = try #require(seen.details)
        #expect(details.contains("GET \(server.baseURL)/users/octocat"), "\(details)")
        #expect(details.contains("Request headers") && details.contains("REDACTED"), "\(details)")
        #expect(!details.contains(Self.token))

        let tap = try await Self.parseTAP(space.url.appendingPathComponent("out/report.tap"))
        let tests = tap.filter { $0["category"] as? String == "test" }
        #expect(tests.count == 1 && tests.first?["ok"] as? Bool == false, "\(tap)")
        let yaml = try #require(tests.first?["yaml"] as? [String: Any], "\(tap)")
        let checks = try #require(yaml["checks"] as? [[String: Any]], "\(yaml)")
        #expect(checks.map { $0["name"] as? String } == ["login", "token kept"])
        #expect(checks.map { $0["passed"] as? Bool } == [false, true])
        #expect(checks.last?["seen"] as? String == "'REDACTED'", "\(checks)")
        try await server.shutdown()
    }

    @Test("batch --report .tap/.json/.html: a test point and a job per macro, tags chosen, TAP and JSON valid")
    func batchReports() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        try space.write(
            "good.py",
            """
            import apimacro
            from apimacro import github
            def main(name="octocat"):
                apimacro.check_equal("login", github.user(name)["login"], name)
            """)
        try space.write("bad.py", "import apimacro\napimacro.check('always', False, seen='a # b: c')\n")
        try space.write(
            "jobs.txt",
            "tags=smoke name=one good.py\nname=two tags=smoke,slow bad.py\ntags=nightly name=three good.py torvalds\n")
        let environment = ["APIMACRO_GITHUB_URL": server.baseURL, "APIMACRO_GITHUB_TOKEN": Self.token]
        let result = try await space.run(
            "batch", "--file", "jobs.txt", "--tags", "smoke", "-j", "1", "--report", "r.tap", "--report", "r.json",
            "--report", "r.html", environment: environment)
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("one") && result.stdout.contains("two") && !result.stdout.contains("three"))

        let tap = try await Self.parseTAP(space.url.appendingPathComponent("r.tap"))
        #expect(tap.first?["version"] as? String == "13" || "\(tap.first?["version"] ?? "")" == "13", "\(tap)")
        #expect("\(tap.first { $0["category"] as? String == "plan" }?["expected"] ?? "")" == "2")
        let tests = tap.filter { $0["category"] as? String == "test" }
        #expect(tests.map { $0["description"] as? String } == ["- one", "- two"] || tests.count == 2, "\(tests)")
        #expect(tests.map { $0["ok"] as? Bool } == [true, false])
        let failedChecks = (tests.last?["yaml"] as? [String: Any])?["checks"] as? [[String: Any]]
        #expect(failedChecks?.first?["seen"] as? String == "'a # b: c'", "\(String(describing: failedChecks))")

        let file = space.url.appendingPathComponent("r.json")
        #expect(try await Self.schemaErrors(file) == "")
        let jobs = try #require(try Self.json(file)["jobs"] as? [[String: Any]])
        #expect(jobs.map { $0["name"] as? String } == ["one", "two"])
        #expect((jobs.first?["exchanges"] as? [Any])?.count == 1)

        let seen = try await Self.browse(space.url.appendingPathComponent("r.html"))
        #expect(seen.console.isEmpty, "\(seen.console)")
        #expect(seen.bars.count == 1)
        #expect(seen.failedChecks == ["✗ FAILED always — seen 'a # b: c'"], "\(seen.failedChecks)")
        #expect(!seen.text.contains(Self.token))
        try await server.shutdown()
    }

    @Test("apimacro report draws a browser's HAR: marks 304s and cache hits in text, redacts credentials")
    func browserHAR() async throws {
        let space = try Workspace()
        defer { space.remove() }
        // Written by hand after the HAR 1.2 spec and Chromium's exports (pages, _initiator,
        // _resourceType, _fromCache, http/2 pseudo-headers, -1 for phases that did not happen).
        let har = Self.folder.appendingPathComponent("browser-export.har")
        let result = try await space.run("report", har.path, "-o", "page.html")
        #expect(result.status == 0, "\(result.stderr)")
        let seen = try await Self.browse(space.url.appendingPathComponent("page.html"), openRow: true)
        #expect(seen.console.isEmpty, "\(seen.console)")
        #expect(
            seen.bars.map(\.url) == [
                "https://shop.example/", "https://shop.example/api/cart?id=7", "https://cdn.example/site.css",
            ])
        Self.expectProportional(seen.bars, span: 400.2)
        #expect(seen.bars[1].row.contains("revalidated (304)"), "\(seen.bars[1].row)")
        #expect(seen.bars[2].row.contains("cache hit"), "\(seen.bars[2].row)")
        let details = try #require(seen.details)
        #expect(details.contains("TLS") && details.contains("35.4 ms"), "\(details)")
        #expect(details.contains("cookie") && !details.contains("browser-cookie-secret-42"), "\(details)")
        let html = try String(contentsOf: space.url.appendingPathComponent("page.html"), encoding: .utf8)
        #expect(!html.contains("browser-cookie-secret-42") && !html.contains("browser-token-abcdef123456"))

        let missing = try await space.run("report", "nothing.har")
        #expect(missing.status == 2, "\(missing.stderr)")
        #expect(missing.stderr.contains("nothing.har"), "\(missing.stderr)")
    }

    @Test("10,000 exchanges: only the rows in view exist; scrolling to the end draws the last")
    func largeHAR() async throws {
        let space = try Workspace()
        defer { space.remove() }
        var entries: [String] = []
        let start = Date(timeIntervalSince1970: 1_790_000_000)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        for index in 0..<10_000 {
            let started = formatter.string(from: start.addingTimeInterval(Double(index) * 0.01))
            entries.append(
                #"{"startedDateTime":"\#(started)","time":12,"request":{"method":"GET","url":"https://api.example/item/\#(index)","headers":[]},"response":{"status":200,"headers":[]},"timings":{"blocked":1,"dns":-1,"connect":-1,"send":1,"wait":8,"receive":2}}"#
            )
        }
        try space.write("big.har", #"{"log":{"version":"1.2","entries":[\#(entries.joined(separator: ","))]}}"#)
        let result = try await space.run("report", "big.har")
        #expect(result.status == 0, "\(result.stderr)")
        let seen = try await Self.browse(space.url.appendingPathComponent("big.html"))
        #expect(seen.console.isEmpty, "\(seen.console)")
        #expect(seen.rows > 0 && seen.rows < 100, "rows drawn lazily: \(seen.rows)")
        let last = try #require(seen.lastRow.first)
        #expect(last.url == "https://api.example/item/9999" && last.index == 9999, "\(last)")
        #expect(last.rows < 100, "\(last)")
    }

    @Test("the HAR's timings: curl's phases add up to the time; retries and their wait are kept")
    func harTimings() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        try space.write(
            "two.py",
            """
            import apimacro
            apimacro.request("GET", "\(server.baseURL)/text")
            apimacro.request("GET", "\(server.baseURL)/status/503", check=False)
            """)
        let result = try await space.run("run", "--record", "two.har", "--no-cache", "two.py")
        #expect(result.status == 0, "\(result.stderr)")
        let log = try #require(try Self.json(space.url.appendingPathComponent("two.har"))["log"] as? [String: Any])
        let entries = try #require(log["entries"] as? [[String: Any]])
        #expect(entries.count == 2)
        for entry in entries {
            let timings = try #require(entry["timings"] as? [String: Any])
            let phases = ["blocked", "dns", "connect", "send", "wait", "receive"].compactMap { timings[$0] as? Double }
            #expect(phases.count == 6, "\(timings)")
            let time = try #require(entry["time"] as? Double)
            #expect(abs(phases.filter { $0 >= 0 }.reduce(0, +) - time) < 0.01, "\(timings) vs \(time)")
            #expect((timings["wait"] as? Double ?? -1) >= 0)
        }
        let first = try #require(entries.first?["timings"] as? [String: Any])
        #expect((first["connect"] as? Double ?? -1) >= 0, "a new connection: \(first)")
        let retried = try #require(entries.last?["timings"] as? [String: Any])
        #expect((retried["_retries"] as? Int ?? 0) >= 1, "\(retried)")
        #expect((retried["_retried"] as? Double ?? 0) > 0, "\(retried)")
        #expect(first["_retries"] == nil && first["_retried"] == nil, "no retry: \(first)")

        // APIMACRO_MAX_RATE=12/min: the second request waits its turn, about 5 s, in _throttled.
        let paced = try await space.run(
            "run", "--record", "paced.har", "--no-cache", "-c",
            "import apimacro\nfor _ in range(2): apimacro.request('GET', '\(server.baseURL)/text')\n",
            environment: ["APIMACRO_MAX_RATE": "12/min"])
        #expect(paced.status == 0, "\(paced.stderr)")
        let pacedLog = try #require(
            try Self.json(space.url.appendingPathComponent("paced.har"))["log"] as? [String: Any])
        let pacedEntries = try #require(pacedLog["entries"] as? [[String: Any]])
        let waited = pacedEntries.last?["timings"] as? [String: Any] ?? [:]
        #expect((waited["_throttled"] as? Double ?? 0) > 0, "\(waited)")
        #expect((waited["blocked"] as? Double ?? 0) >= (waited["_throttled"] as? Double ?? 0), "\(waited)")

        // A 429 with retry-after 1: the answer is waited out and asked again; the second
        // attempt's entry holds the wait (at least the second the server asked for).
        server.inject([.rateLimited(retryAfter: 1)], path: "/users/octocat")
        let limited = try await space.run(
            "run", "--record", "limited.har", "--no-cache", "-c",
            "from apimacro import github\ngithub.user('octocat')\n",
            environment: ["APIMACRO_GITHUB_URL": server.baseURL, "APIMACRO_GITHUB_TOKEN": Self.token])
        #expect(limited.status == 0, "\(limited.stderr)")
        let limitedLog = try #require(
            try Self.json(space.url.appendingPathComponent("limited.har"))["log"] as? [String: Any])
        let limitedEntries = try #require(limitedLog["entries"] as? [[String: Any]])
        #expect(limitedEntries.compactMap { ($0["response"] as? [String: Any])?["status"] as? Int } == [429, 200])
        let again = limitedEntries.last?["timings"] as? [String: Any] ?? [:]
        #expect((again["_throttled"] as? Double ?? 0) >= 1000, "\(again)")
        #expect((limitedEntries.last?["time"] as? Double ?? 0) >= (again["_throttled"] as? Double ?? 0))
        try await server.shutdown()
    }

    @Test("--bail stops at the first failed job; --exclude-tags skips; unknown tags are named")
    func tagsAndBail() async throws {
        let space = try Workspace()
        defer { space.remove() }
        try space.write("ok.py", "print('ran ok')\n")
        try space.write("fail.py", "raise SystemExit(3)\n")
        try space.write("jobs.txt", "tags=a name=first fail.py\ntags=b name=second ok.py\n")
        let bail = try await space.run("batch", "--file", "jobs.txt", "-j", "1", "--bail", "--report", "bail.xml")
        #expect(bail.status == 1)
        let junit = try String(contentsOf: space.url.appendingPathComponent("bail.xml"), encoding: .utf8)
        #expect(junit.hasPrefix("<?xml") && junit.contains("<skipped message=\"not run"), "\(junit)")
        #expect(!bail.stdout.contains("ran ok"), "\(bail.stdout)")
        #expect(bail.stdout.contains("not run"), "\(bail.stdout)")
        let excluded = try await space.run("batch", "--file", "jobs.txt", "--exclude-tags", "a")
        #expect(excluded.status == 0, "\(excluded.stderr)")
        #expect(excluded.stdout.contains("ran ok") && !excluded.stdout.contains("first"), "\(excluded.stdout)")
        let unknown = try await space.run("batch", "--file", "jobs.txt", "--tags", "a,nightly")
        #expect(unknown.status == 2)
        #expect(unknown.stderr.contains("--tags nightly: no job has the tag 'nightly'"), "\(unknown.stderr)")
        #expect(unknown.stderr.contains("a, b"), "\(unknown.stderr)")
        try space.write("bad-tags.txt", "tags=no/slash ok.py\n")
        let badTags = try await space.run("batch", "--file", "bad-tags.txt")
        #expect(badTags.status == 2)
        #expect(badTags.stderr.contains("bad-tags.txt:1: tags=no/slash is not a list of tags"), "\(badTags.stderr)")
    }

    @Test("--each rows.csv: the macro once per row, each column to main()'s parameter of that name")
    func each() async throws {
        let space = try Workspace()
        defer { space.remove() }
        try space.write(
            "hello.py",
            """
            def main(user, greeting: str = "hi", loud: bool = False, *, times: int = 1):
                text = f"{greeting} {user}" * times
                print(text.upper() if loud else text)
            """)
        try space.write("rows.csv", "user,greeting,loud,times\nada,hello,no,1\n\"-bob, jr\",\"say \"\"yo\"\"\",yes,2\n")
        let result = try await space.run("batch", "--each", "rows.csv", "hello.py", "-j", "1", "--report", "e.json")
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("==> hello.row1: ok"), "\(result.stdout)")
        #expect(result.stdout.contains("hello ada\n"), "\(result.stdout)")
        #expect(result.stdout.contains(#"SAY "YO" -BOB, JRSAY "YO" -BOB, JR"#), "\(result.stdout)")
        let jobs = try #require(try Self.json(space.url.appendingPathComponent("e.json"))["jobs"] as? [[String: Any]])
        #expect(jobs.map { $0["name"] as? String } == ["hello.row1", "hello.row2"])

        try space.write("missing.csv", "greeting\nhey\n")
        let missing = try await space.run("batch", "--each", "missing.csv", "hello.py")
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("missing.csv has no column 'user'"), "\(missing.stderr)")
        try space.write("extra.csv", "user,colour\nada,red\n")
        let extra = try await space.run("batch", "--each", "extra.csv", "hello.py")
        #expect(extra.status == 2)
        #expect(extra.stderr.contains("the column 'colour' is no parameter of hello.py's main("), "\(extra.stderr)")
        try space.write("ragged.csv", "user,greeting\nada\n")
        let ragged = try await space.run("batch", "--each", "ragged.csv", "hello.py")
        #expect(ragged.status == 2)
        #expect(ragged.stderr.contains("ragged.csv:2 is not CSV"), "\(ragged.stderr)")
        try Data([0x89, 0x50, 0x4E, 0x47, 0x00, 0xFF]).write(to: space.url.appendingPathComponent("image.csv"))
        let binary = try await space.run("batch", "--each", "image.csv", "hello.py")
        #expect(binary.status == 2)
        #expect(binary.stderr.contains("--each image.csv is not CSV"), "\(binary.stderr)")
    }

    @Test("a --report that cannot be written, or of no known kind: exit 2 before anything runs")
    func unwritableReport() async throws {
        let space = try Workspace()
        defer { space.remove() }
        try space.write("touch.py", "open('ran', 'w').close()\n")
        try space.write("afile", "")
        for command in [["run"], ["batch"]] {
            let unwritable = try await space.run(command[0], "--report", "afile/out.html", "touch.py")
            #expect(unwritable.status == 2, "\(command): \(unwritable.stderr)")
            #expect(unwritable.stderr.contains("--report: cannot write"), "\(unwritable.stderr)")
            #expect(unwritable.stderr.contains("afile"), "\(unwritable.stderr)")
            let unknown = try await space.run(command[0], "--report", "out.pdf", "touch.py")
            #expect(unknown.status == 2, "\(unknown.stderr)")
            #expect(unknown.stderr.contains(".html"), "\(unknown.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: space.url.appendingPathComponent("ran").path))
    }
}
