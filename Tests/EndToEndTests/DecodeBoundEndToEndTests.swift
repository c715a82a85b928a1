import Foundation
import TestSupport
import Testing

/// What one JSON body may build, through the binary: at most 256 MiB of Python objects
/// (`JSONToPython.decode`), measured as the process's own peak memory, and an error body is
/// not decoded by Foundation past `JSONPath.maxValues`.
@Suite("a hostile server's dense JSON is bounded, through the binary", .serialized)
struct DecodeBoundEndToEndTests {
    /// A gibibyte in KiB: the generous bound on the process's peak memory.
    static let gibibyteKiB = 1 << 20

    /// Prints `ParseError <message>` or `decoded <length>` for the JSON at `url`, then the
    /// process's peak resident memory in KiB (`VmHWM` of /proc/self/status: this process's own,
    /// where `ru_maxrss` would include the test process's, which `posix_spawn`'s vfork shares).
    static func decodeMacro(_ url: String) -> String {
        """
        import apimacro
        try:
            print('decoded', len(apimacro.get(\(String(reflecting: url))).json()))
        except apimacro.ParseError as e:
            print('ParseError', e)
        print([line.split()[1] for line in open('/proc/self/status') if line.startswith('VmHWM:')][0])
        """
    }

    /// The peak KiB the last line of `stdout` gives (0 when it is no number).
    static func peakKiB(_ stdout: String) -> Int {
        Int(stdout.split(separator: "\n").last ?? "") ?? 0
    }

    @Test(
        "24 MiB of [{},{},…] (as it is, after a BOM, in UTF-16, after 600 levels of nesting) is a ParseError, not 700 MiB of objects",
        arguments: ["plain", "bom", "utf16", "deep"])
    func emptyObjects(form: String) async throws {
        let server = try await TestServer.start()
        let url = server.baseURL + "/hostile/json/empty-objects?mib=24&form=\(form)"
        let space = try Workspace(files: ["bomb.py": Self.decodeMacro(url)])
        defer { space.remove() }
        let result = try await space.run("run", "--no-cache", "--request-timeout", "600", "bomb.py")
        try await server.shutdown()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("ParseError \(url) answered 200 with JSON"), "\(result.stdout)")
        let why = form == "deep" ? "it nests deeper than 512 levels" : "would take more than 256 MiB"
        #expect(result.stdout.contains(why), "\(result.stdout)")
        let peak = Self.peakKiB(result.stdout)
        #expect(peak > 0 && peak < Self.gibibyteKiB, "peak \(peak) KiB")
    }

    @Test(
        "an error status with 24 MiB of [{},{},…]: the error message is not looked for in it (1.3 GB as Foundation objects)"
    )
    func errorBody() async throws {
        let server = try await TestServer.start()
        let url = server.baseURL + "/hostile/json/empty-objects?mib=24&status=500"
        let space = try Workspace(files: [
            "error.py": """
            import apimacro
            try:
                apimacro.get(\(String(reflecting: url)))
            except apimacro.HTTPError as e:
                print('HTTPError', e.status, len(e.body))
            print([line.split()[1] for line in open('/proc/self/status') if line.startswith('VmHWM:')][0])
            """
        ])
        defer { space.remove() }
        let result = try await space.run("run", "--no-cache", "--request-timeout", "600", "error.py")
        try await server.shutdown()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("HTTPError 500 4096\n"), "\(result.stdout)")
        let peak = Self.peakKiB(result.stdout)
        #expect(peak > 0 && peak < Self.gibibyteKiB, "peak \(peak) KiB")
    }

    @Test("a body that fits the bound decodes as before: 1 MiB of [{},{},…] is 349,524 dicts")
    func fittingBody() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "fits.py": Self.decodeMacro(server.baseURL + "/hostile/json/empty-objects?mib=1&form=utf16")
        ])
        defer { space.remove() }
        let result = try await space.run("run", "--no-cache", "--request-timeout", "600", "fits.py")
        try await server.shutdown()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("decoded 349524\n"), "\(result.stdout)")
    }
}
