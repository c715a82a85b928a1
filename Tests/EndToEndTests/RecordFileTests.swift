import Foundation
import TestSupport
import Testing

/// `--record FILE.har` never loses a recording silently: a file that cannot be written is a
/// usage error before anything runs, and a failed write at the end is a failed run.
@Suite("--record: a file that cannot be written is never a silent exit 0")
struct RecordFileTests {
    /// Makes one request, then notes that it ran (`ran`).
    static let fetches = """
        import apimacro, sys
        apimacro.get(sys.argv[1] + "/text")
        open("ran", "w").close()
        """

    @Test("run, batch and repl with --record in a missing folder, or on a folder: exit 2 before the macro runs")
    func unwritableBeforeRunning() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: ["fetch.py": Self.fetches, "folder.har/keep": ""])
        defer { space.remove() }
        let missing = "/no/such/dir/x.har"
        let folder = space.url.appendingPathComponent("folder.har").path
        let session = "apimacro.get('\(server.baseURL)/text')\nopen('ran', 'w').close()\n"
        for (file, reason) in [(missing, "No such file or directory"), (folder, "it is a folder")] {
            let run = try await space.run("run", "--record", file, "fetch.py", server.baseURL)
            #expect(run.status == 2, "\(run.stderr)")
            #expect(run.stderr == "apimacro: cannot write the HAR file \(file): \(reason)\n")
            let repl = try await space.run("repl", "--record", file, stdin: session)
            #expect(repl.status == 2, "\(repl.stderr)")
            #expect(repl.stderr == "apimacro: cannot write the HAR file \(file): \(reason)\n")
        }
        // batch records each job to FILE.NAME.har beside FILE.har: checked for every job before any runs.
        let batch = try await space.run("batch", "--record", missing, "fetch.py")
        #expect(batch.status == 2, "\(batch.stderr)")
        #expect(
            batch.stderr == "apimacro: cannot write the HAR file /no/such/dir/x.fetch.har: No such file or directory\n",
            "\(batch.stderr)")
        #expect(batch.stdout.isEmpty, "no job ran: \(batch.stdout)")
        #expect(!FileManager.default.fileExists(atPath: space.url.appendingPathComponent("ran").path))
        #expect(server.requests.isEmpty, "nothing was fetched: \(server.requests.map(\.path))")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: folder) == ["keep"], "the probe leaves nothing behind")
        try await server.shutdown()
    }

    @Test("a folder removed while the macro runs: the run says the HAR file cannot be written and exits 1, not 0")
    func failedFinalWrite() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "vanish.py": """
            import apimacro, shutil, sys
            apimacro.get(sys.argv[1] + "/text")
            shutil.rmtree("out")
            print("done")
            """,
            "out/.keep": "",
        ])
        defer { space.remove() }
        let har = space.url.appendingPathComponent("out/x.har").path
        let run = try await space.run("run", "--record", har, "vanish.py", server.baseURL)
        #expect(run.status == 1, "\(run.stderr)")
        #expect(run.stdout == "done\n")
        #expect(run.stderr.hasPrefix("apimacro: cannot write the HAR file \(har): "), "\(run.stderr)")

        // The REPL writes the session's recording when it ends; one it cannot write fails it.
        try space.write("out/.keep", "")
        let session = "apimacro.get('\(server.baseURL)/text').status\n"
        let kept = try await space.run("repl", "--record", har, stdin: session)
        #expect(kept.status == 0, "\(kept.stderr)")
        let recorded = try String(contentsOf: URL(fileURLWithPath: har), encoding: .utf8)
        #expect(recorded.contains("\"url\" : \"\(server.baseURL)/text\""), "\(recorded.prefix(400))")
        let lost = try await space.run(
            "repl", "--record", har, stdin: session + "import shutil\nshutil.rmtree('out')\n")
        try await server.shutdown()
        #expect(lost.status == 1, "\(lost.stderr)")
        #expect(lost.stderr.hasPrefix("apimacro: cannot write the HAR file \(har): "), "\(lost.stderr)")
    }
}
