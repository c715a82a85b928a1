import Foundation
import TestSupport
import Testing

/// A body the HTTP cache hands back again (a hit, a 304) is built from the tape its first decode
/// scanned (`StoredBodyTapes`): through the binary, every call still gets objects of its own, and
/// a body stored anew by another process is decoded for itself.
@Suite("a stored body decoded from its tape, through the binary")
struct CacheDecodeEndToEndTests {
    /// The source (`network`, `cache hit`, `revalidated (304)`) of each `-v` exchange line.
    static func sources(_ result: RunResult) -> [String] {
        result.stderr.split(separator: "\n").filter { $0.hasPrefix("apimacro: GET ") }.map { line in
            line.split(separator: " ", maxSplits: 5).last.map(String.init) ?? ""
        }
    }

    @Test("a hit or 304 answer changed by the macro is not what the next call gets")
    func mutatedAnswers() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "mutate.py": """
            import json
            from apimacro import github
            paths = ["/cache/max-age/600", "/cache/etag/m", "/users/octocat", "/cache/fresh/users/octocat"]
            for path in paths:
                first = github.get(path)
                original = json.dumps(first, sort_keys=True)
                seen = [first]
                for _ in range(3):
                    got = github.get(path)
                    assert json.dumps(got, sort_keys=True) == original, (path, got)
                    assert all(got is not other for other in seen), path
                    seen.append(got)
                    # Changed every way a dict is: values, keys, a member list's contents.
                    key = sorted(got)[0]
                    got[key] = ["changed"]
                    got[key].append(1)
                    del got[sorted(got)[-1]]
                    got["added"] = {"x": 1}
                print(path, len(original))
            """
        ])
        defer { space.remove() }
        let result = try await space.run(
            "run", "-v", "mutate.py", environment: ["APIMACRO_GITHUB_URL": server.baseURL])
        try await server.shutdown()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.split(separator: "\n").count == 4, "\(result.stdout)")
        let hit = ["network", "cache hit", "cache hit", "cache hit"]
        let revalidated = ["network"] + Array(repeating: "revalidated (304)", count: 3)
        #expect(Self.sources(result) == hit + revalidated + revalidated + hit, "\(result.stderr)")
    }

    @Test("a 304 after another process stored a new body of the same length answers that body")
    func bodyChangedByAnotherProcess() async throws {
        let server = try await TestServer.start()
        // Same length, other numbers: the scan reads numbers into the tape, so a tape of the old
        // body built on the new one's bytes would give the old numbers. Past 256 bytes, which a
        // body needs for its tape to be kept (`StoredBodyTapes.smallest`).
        let padding = String(repeating: "p", count: 300)
        let old = #"{"id": 1, "count": 10, "name": "old", "padding": "\#(padding)"}"#
        let new = #"{"id": 2, "count": 20, "name": "new", "padding": "\#(padding)"}"#
        let path = "/cache/etag/changing"
        // The macro's three calls (a 200, then two 304s against the old body's ETag), the other
        // process's (its conditional request no longer matches: a 200 with the new body, which
        // it stores), then the macro's fourth (a 304 against the new body's ETag).
        server.inject(
            [.status(200, body: old), .status(200, body: old), .status(200, body: old)]
                + [.status(200, body: new), .status(200, body: new)], path: path)
        let space = try Workspace(files: [
            "first.py": """
            import json, os, subprocess, sys
            from apimacro import github
            path = sys.argv[2]
            for _ in range(3):
                print(json.dumps(github.get(path), sort_keys=True))
            # Another process, another connection to the same cache file, stores the new body.
            other = subprocess.run([sys.argv[1], "run", "second.py", path], capture_output=True, text=True)
            print("other:", other.returncode, other.stdout.strip(), other.stderr.strip())
            print(json.dumps(github.get(path), sort_keys=True))
            """,
            "second.py": """
            import json, sys
            from apimacro import github
            print(json.dumps(github.get(sys.argv[1]), sort_keys=True))
            """,
        ])
        defer { space.remove() }
        let result = try await space.run(
            "run", "-v", "first.py", Binary.url.path, path, environment: ["APIMACRO_GITHUB_URL": server.baseURL])
        let requests = server.requests.filter { $0.path == path }
        try await server.shutdown()
        #expect(result.status == 0, "\(result.stderr)")
        let oldLine = #"{"count": 10, "id": 1, "name": "old", "padding": "\#(padding)"}"#
        let newLine = #"{"count": 20, "id": 2, "name": "new", "padding": "\#(padding)"}"#
        #expect(
            result.stdout == [oldLine, oldLine, oldLine, "other: 0 \(newLine) ", newLine].joined(separator: "\n")
                + "\n",
            "\(result.stdout)\(result.stderr)")
        #expect(
            Self.sources(result) == ["network", "revalidated (304)", "revalidated (304)", "revalidated (304)"],
            "the macro's last call is a 304 against the body the other process stored: \(result.stderr)")
        // The other process asked with the old body's ETag; the macro's last call with the new one's.
        let conditions = requests.map { $0.header("if-none-match") }
        #expect(requests.count == 5 && conditions[0] == nil, "\(conditions)")
        #expect(conditions.count == 5 && conditions[1] != nil && conditions[2] == conditions[1])
        #expect(conditions.count == 5 && conditions[3] == conditions[1])
        #expect(conditions.count == 5 && conditions[4] != nil && conditions[4] != conditions[1])
    }
}
