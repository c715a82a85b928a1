import Foundation
import Synchronization
import Testing
import WebAPI

@testable import MacroRuntime

/// The pure parts of `apimacro api` and of the terminal's output (issue 27), tested without I/O.
@Suite("api and terminal parts")
struct ApiPartsTests {
    // MARK: fields

    @Test("-f and -F: strings, gh's typed values, @FILE; a body with arrays and objects, a query as written")
    func fields() throws {
        let files = ["note.txt": Data("hi\n".utf8)]
        let fields = try ApiFields(
            raw: ["s=5", "empty=", "eq=a=b"],
            typed: [
                "n=-12", "t=true", "f=false", "z=null", "x=1.5", "l[]=a", "l[]=3", "o[k]=v", "o[p][q]=true",
                "file=@note.txt",
            ],
            read: { path in
                guard let data = files[path] else { throw CocoaError(.fileNoSuchFile) }
                return data
            })
        #expect(
            try fields.body().json
                == #"{"s":"5","empty":"","eq":"a=b","n":-12,"t":true,"f":false,"z":null,"x":"1.5","l":["a",3],"o":{"k":"v","p":{"q":true}},"file":"hi\n"}"#
        )
        #expect(
            fields.query.map { "\($0.0)=\($0.1)" }.prefix(7) == [
                "s=5", "empty=", "eq=a=b", "n=-12", "t=true", "f=false", "z=",
            ])
        #expect(ApiFields.quoted("a\"b\\c\u{1}\n") == #""a\"b\\c\u0001\n""#)
    }

    @Test(
        "a field it cannot read is a usage error naming it",
        arguments: [
            (["novalue"], [String](), "-f \"novalue\": write key=value"),
            ([], ["=x"], "-F \"=x\": write key=value"),
            ([], ["a[=1"], "-F/-f key \"a[\""),
            ([], ["[]=1"], "-F/-f key \"[]\""),
            ([], ["a[][b]=1"], "-F/-f key \"a[][b]\""),
            ([], ["a=1", "a[b]=2"], "-F/-f \"a[b]\": its name already holds another kind of value"),
            ([], ["a=@missing"], "-F: cannot read missing"),
        ])
    func badFields(raw: [String], typed: [String], message: String) throws {
        do {
            _ = try ApiFields(raw: raw, typed: typed, read: { _ in throw CocoaError(.fileNoSuchFile) }).body()
            Issue.record("no error for \(raw) \(typed)")
        } catch let report as ExitReport {
            #expect(report.exitCode == 2)
            #expect(report.message?.hasPrefix("apimacro: \(message)") == true, "\(report)")
        }
    }

    // MARK: targets

    @Test("a plugin's endpoint template matches a path; a URL is under a base URL on the same origin and path")
    func matching() {
        #expect(ApiTarget.matches("/venues/{id}", "/venues/42"))
        #expect(ApiTarget.matches("/search", "/search?query=x"))
        #expect(ApiTarget.matches("/search", "search/"))
        #expect(!ApiTarget.matches("/venues/{id}", "/venues/42/photos"))
        #expect(!ApiTarget.matches("/search", "/search_by_date"))
        #expect(ApiCall.isUnder("https://api.github.com", "https://api.github.com/users/x"))
        #expect(ApiCall.isUnder("https://api.github.com", "HTTPS://API.GITHUB.COM:443/users/x"))
        #expect(!ApiCall.isUnder("https://api.github.com", "http://api.github.com/users/x"))
        #expect(!ApiCall.isUnder("https://api.github.com", "https://api.github.com.evil.example/users/x"))
        #expect(ApiCall.isUnder("https://h.example/api/v3", "https://h.example/api/v3/users?x=1"))
        #expect(!ApiCall.isUnder("https://h.example/api/v3", "https://h.example/api/v30/users"))
        #expect(!ApiCall.isUnder("", "https://h.example/"))
    }

    @Test("the request: GET unless fields make it POST; fields to the query for GET, a JSON body otherwise")
    func request() throws {
        var call = ApiCall(client: "github", target: "/things?per_page=5")
        let none = try call.request(fields: ApiFields(raw: [], typed: []), headers: [("X-A", "1")])
        #expect(none.method == "GET")
        #expect(none.headers.map(\.0) == ["X-A"])
        #expect(ApiCall.names("per_page", none))
        #expect(!ApiCall.names("page", none))
        let posted = try call.request(fields: ApiFields(raw: ["a=1"], typed: []), headers: [])
        #expect(posted.method == "POST")
        guard case .json(let bytes) = posted.body else {
            Issue.record("no JSON body")
            return
        }
        #expect(String(decoding: bytes, as: UTF8.self) == #"{"a":"1"}"#)
        call.method = "get"
        let got = try call.request(fields: ApiFields(raw: ["a=1"], typed: []), headers: [])
        #expect(got.method == "GET")
        #expect(got.query.map { "\($0.0)=\($0.1)" } == ["a=1"])
        #expect(try ApiCall.header("Accept:  application/json ") == ("Accept", "application/json"))
        #expect(throws: ExitReport.self) { try ApiCall.header("Bad Name: x") }
    }

    @Test("a page's item count: an array's length, or the list's at the items path; nil when neither")
    func itemCount() {
        #expect(ApiCall.itemCount(Array("[1,2,3]".utf8), at: []) == 3)
        #expect(ApiCall.itemCount(Array(#"{"hits":[1,2],"page":0}"#.utf8), at: ["hits"]) == 2)
        #expect(ApiCall.itemCount(Array(#"{"hits":[1,2]}"#.utf8), at: []) == nil)
        #expect(ApiCall.itemCount(Array("not json".utf8), at: ["hits"]) == nil)
    }

    @Test("jq's compile messages on one line")
    func compileMessage() {
        let messages = """
            jq: error: syntax error, unexpected $end (Unix shell quoting issues?) at <top-level>, line 1:
            .[[
            jq: 1 compile error

            """
        #expect(
            JQProcess.compileMessage(messages)
                == "syntax error, unexpected $end (Unix shell quoting issues?) at <top-level>, line 1: .[[")
        #expect(JQProcess.compileMessage("") == "the filter does not compile")
    }

    // MARK: the terminal

    @Test("control characters from a server are shown, not obeyed; JSON keeps its own escapes")
    func terminalText() {
        let raw = Array("a\u{1B}[2Jb\u{7}\tc\nd\u{7F}e\u{9B}f é".utf8)
        #expect(
            String(decoding: TerminalText.escapingControls(raw), as: UTF8.self)
                == "a\\x1b[2Jb\\x07\tc\nd\\x7fe\\u009bf é")
        let json = Array("{\"a\":\"x\u{7F}\u{9B}\"}\n".utf8)
        #expect(
            String(decoding: TerminalText.escapingControls(json, json: true), as: UTF8.self)
                == "{\"a\":\"x\\u007f\\u009b\"}\n")
    }

    @Test("redacting bytes: text as text, other bytes kept exactly around the secret")
    func redactBytes() {
        let redactor = Redactor(secrets: ["s3cr3t-token"])
        #expect(redactor.redact(bytes: Array("a s3cr3t-token b".utf8)) == Array("a REDACTED b".utf8))
        let binary: [UInt8] = [0xFF, 0x00] + Array("s3cr3t-token".utf8) + [0xFE]
        #expect(redactor.redact(bytes: binary) == [0xFF, 0x00] + Array("REDACTED".utf8) + [0xFE])
        #expect(Redactor(secrets: []).redact(bytes: binary) == binary)
    }

    @Test("colour: the flag, then [ui] color, then NO_COLOR, then a dumb terminal; bad values named")
    func colorChoice() throws {
        func resolve(_ flag: String?, _ environment: [String: String], origins: [String: String] = [:]) throws
            -> ColorChoice
        {
            try ColorChoice.resolve(flag: flag, check: SettingCheck(environment: environment, origins: origins))
        }
        #expect(try resolve(nil, [:]) == .auto)
        #expect(try resolve(nil, ["NO_COLOR": "1"]) == .never)
        #expect(try resolve(nil, ["NO_COLOR": ""]) == .auto)
        #expect(try resolve(nil, ["TERM": "dumb"]) == .never)
        #expect(try resolve("always", ["NO_COLOR": "1", "TERM": "dumb"]) == .always)
        #expect(try resolve(nil, ["NO_COLOR": "1", "APIMACRO_UI_COLOR": "always"]) == .always)
        #expect(try resolve(nil, ["NO_COLOR": "1", "APIMACRO_UI_COLOR": "auto"]) == .never)
        #expect(try resolve("NEVER", ["APIMACRO_UI_COLOR": "always"]) == .never)
        #expect(ColorChoice.always.colors(-1) && !ColorChoice.never.colors(-1) && !ColorChoice.auto.colors(-1))
        do {
            _ = try resolve(
                nil, ["APIMACRO_UI_COLOR": "alwys"], origins: ["APIMACRO_UI_COLOR": "config.toml: ui.color"])
            Issue.record("no error")
        } catch let error as MacroError {
            #expect(
                error.description
                    == "config.toml: ui.color: 'alwys' is not a colour choice; accepted: auto, always, never; did you mean 'always'?"
            )
        }
    }

    @Test("the palette paints apimacro's lines and a traceback's last line, or nothing")
    func palette() {
        let on = Palette(enabled: true)
        #expect(on.error("apimacro: bad") == "\u{1B}[1;31mapimacro:\u{1B}[0m \u{1B}[31mbad\u{1B}[0m")
        #expect(
            on.warning("apimacro: warning: stale") == "\u{1B}[1;33mapimacro: warning:\u{1B}[0m \u{1B}[33mstale\u{1B}[0m"
        )
        #expect(
            on.traceback("Traceback:\n  File \"m.py\"\nValueError: x\n")
                == "Traceback:\n  File \"m.py\"\n\u{1B}[1;31mValueError: x\u{1B}[0m\n")
        let off = Palette(enabled: false)
        #expect(off.error("apimacro: bad") == "apimacro: bad")
        #expect(off.traceback("E: x\n") == "E: x\n")
    }

    @Test("the progress line: shown only after its delay, redrawn at most every 100 ms, cut to the width, erased once")
    func progressLine() {
        let written = Mutex<[String]>([])
        let start = ContinuousClock.now
        let clock = Mutex(start)
        let line = ProgressLine(
            delay: .milliseconds(500), width: { 20 }, now: { clock.withLock { $0 } },
            write: { text in written.withLock { $0.append(text) } })
        func at(_ milliseconds: Int) { clock.withLock { $0 = start + .milliseconds(milliseconds) } }
        line.begin()
        at(499)
        line.update("early")
        #expect(written.withLock { $0 }.isEmpty)
        line.erase()
        #expect(written.withLock { $0 }.isEmpty, "nothing shown, nothing erased")
        at(1000)
        line.begin()
        at(1500)
        line.update("a long progress text that does not fit")
        at(1599)
        line.update("throttled")
        #expect(written.withLock { $0 } == ["\r\u{1B}[2ma long progress te…\u{1B}[0m\u{1B}[K"])
        at(1600)
        line.update("again")
        #expect(written.withLock { $0 }.last == "\r\u{1B}[2magain\u{1B}[0m\u{1B}[K")
        #expect(line.isShown)
        line.erase()
        line.erase()
        #expect(written.withLock { $0 }.last == "\r\u{1B}[K")
        #expect(written.withLock { $0 }.count == 3)
        #expect(ProgressLine.count(1_234_567) == "1,234,567")
        #expect(
            ProgressLine.pagesText(client: "github", pages: 1, items: 100, requests: 2, remaining: 4999)
                == "github: 1 page · 100 items · 2 requests · rate limit 4,999 left")
        #expect(
            ProgressLine.pagesText(client: "x", pages: 2, items: nil, requests: 1, remaining: nil)
                == "x: 2 pages · 1 request")
    }
}
