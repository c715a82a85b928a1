import Foundation
import TestSupport
import Testing

/// `apimacro cache clear` gives the disk space back, and says truthfully how much.
@Suite("cache clear gives the space back")
struct CacheClearTests {
    /// The bytes of the cache's files (database, WAL, shared-memory index) in `folder`.
    static func diskBytes(_ folder: URL) -> (database: Int, wal: Int, total: Int) {
        func size(_ name: String) -> Int {
            let path = folder.appendingPathComponent(name).path
            return ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
        }
        let database = size("cache.sqlite")
        let wal = size("cache.sqlite-wal")
        return (database, wal, database + wal + size("cache.sqlite-shm"))
    }

    @Test(
        "12 MB cached through real requests, another process holding the cache open: clear leaves the database and its WAL small and reports what it freed"
    )
    func clearFreesTheFiles() async throws {
        let server = try await TestServer.start()
        // Fills the cache, then keeps its connections open (as a running batch would) until `go`.
        let space = try Workspace(files: [
            "fill.py": """
            import apimacro, os, sys, time
            for i in range(12):
                r = apimacro.get(sys.argv[1] + "/big.json", params={"mb": "1", "i": str(i)})
                assert len(r.content) > 1_000_000, len(r.content)
            open("filled", "w").close()
            while not os.path.exists("go"):
                time.sleep(0.01)
            print("filled")
            """
        ])
        defer { space.remove() }
        async let filling = space.run("run", "fill.py", server.baseURL)
        defer { try? space.write("go", "") }
        try await space.waitFor("filled")
        let folder = space.url.appendingPathComponent(".cache/apimacro")
        let before = Self.diskBytes(folder)
        #expect(before.total > 12_000_000, "the cache holds the 12 answers: \(before)")
        let info = try await space.run("cache", "info")
        #expect(info.stdout.contains("entries  12\n"), "\(info.stdout)")
        let onDisk = String(format: "%.1f MB", Double(Self.diskBytes(folder).total) / 1e6)
        #expect(info.stdout.contains("on disk  \(onDisk) "), "\(info.stdout)")

        let beforeClear = Self.diskBytes(folder)
        let clear = try await space.run("cache", "clear")
        let after = Self.diskBytes(folder)
        try space.write("go", "")
        let fill = try await filling
        try await server.shutdown()
        #expect(fill.status == 0 && fill.stdout == "filled\n", "\(fill.stderr)")
        #expect(clear.status == 0, "\(clear.stderr)")
        // An empty database is a few pages; the WAL is emptied (4 KiB pages: 64 KiB is a margin).
        #expect(after.database < 65_536, "cache.sqlite keeps \(after.database) bytes")
        #expect(after.wal == 0, "the WAL keeps \(after.wal) bytes")
        let freed = String(format: "%.1f MB", Double(beforeClear.total - after.total) / 1e6)
        let left = String(format: "%.1f MB", Double(after.total) / 1e6)
        let path = folder.appendingPathComponent("cache.sqlite").path
        #expect(
            clear.stdout == "removed 12 cached responses from \(path); freed \(freed), its files now take \(left)\n",
            "\(clear.stdout)")
        let empty = try await space.run("cache", "info")
        #expect(empty.stdout.contains("entries  0\n"), "\(empty.stdout)")
    }
}
