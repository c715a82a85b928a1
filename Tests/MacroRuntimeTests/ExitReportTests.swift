import Foundation
import MacroRuntime
import Testing
import WebAPI

/// The one table from how a command ends to its line and exit code (SPEC §1).
@Suite("exit report")
struct ExitReportTests {
    struct Unknown: Error {}

    @Test(
        "each ending's line and exit code",
        arguments: [
            (ExitReport.success, nil, 0),
            (.help("USAGE: apimacro"), "USAGE: apimacro", 0),
            (.status(3), nil, 3),
            (.status(64, "Error: bad"), "apimacro: Error: bad", 64),
            (.failure(), nil, 1),
            (.failure("GET https://x/: 500"), "apimacro: GET https://x/: 500", 1),
            (.usage("no macro named 'x'"), "apimacro: no macro named 'x'", 2),
            (.interrupted(), nil, 130),
            (.interrupted("stars"), "apimacro: stars interrupted", 130),
            (.stopped(signal: 15, "stars"), "apimacro: stars stopped by SIGTERM", 143),
            (.stopped(signal: 1, "stars"), "apimacro: stars stopped by SIGHUP", 129),
            (.stopped(signal: 10, "stars"), "apimacro: stars stopped by signal 10", 138),
            (.stopped(signal: 15), nil, 143),
            (.closedOutput, nil, 141),
        ] as [(ExitReport, String?, Int32)])
    func table(ending: ExitReport, message: String?, code: Int32) {
        #expect(ending.message == message)
        #expect(ending.exitCode == code)
        #expect(ending.printsOnStandardOutput == (ending == .help("USAGE: apimacro")))
    }

    @Test("apimacro's own errors: a refused credential or a malformed request is usage (2), a failed request 1")
    func errors() {
        #expect(ExitReport(APIError(.auth, "no token")) == .usage("no token"))
        #expect(ExitReport(APIError(.invalidRequest, "not a URL")) == .usage("not a URL"))
        #expect(ExitReport(APIError(.notFound, "404")) == .failure("404"))
        #expect(ExitReport(APIError(.network, "refused")) == .failure("refused"))
        #expect(ExitReport(MacroError("cannot read m.py")) == .usage("cannot read m.py"))
        #expect(ExitReport(Unknown() as any Error) == nil)
    }

    @Test("a file that cannot be read or written is a failure (1) in the system's words")
    func systemErrors() throws {
        let missing = "/nonexistent-\(UUID().uuidString)/file"
        let error = try #require(throws: CocoaError.self) { try Data(contentsOf: URL(fileURLWithPath: missing)) }
        #expect(ExitReport(error) == .failure(SystemErrorText.describe(error)))
        #expect(ExitReport(POSIXError(.EACCES)) == .failure(SystemErrorText.describe(POSIXError(.EACCES))))
    }
}
