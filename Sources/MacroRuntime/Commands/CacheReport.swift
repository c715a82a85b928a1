import Clients
public import Platform
import WebAPI

/// `apimacro cache info | clear`: what the HTTP cache holds, or emptying it.
public struct CacheReport: Sendable {
    private let directory: URL

    /// The cache the settings name (`$XDG_CACHE_HOME/apimacro`).
    public init(settings: Settings) throws {
        directory = settings.cacheDirectory
    }

    /// The cache file's path.
    var path: String { directory.appendingPathComponent(HTTPCache.fileName).path }

    /// The cache, opened for counting and clearing: that reads no entry, so it needs no
    /// `cache.key` (a throwaway one does; the real one is neither created nor read).
    private func open() throws -> HTTPCache {
        var generator = SystemRandomNumberGenerator()
        let throwaway = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return try HTTPCache(directory: directory, secret: CacheSecret(bytes: throwaway))
    }

    /// Where the cache is, how many responses and bytes it holds, and how old they are: one line each.
    public func info(now: Double = Date().timeIntervalSince1970) throws -> [String] {
        let cache: HTTPCache
        let summary: HTTPCache.Summary
        do {
            cache = try open()
            summary = try cache.summary()
        } catch {
            throw APIError(
                .invalidRequest,
                "the HTTP cache \(path) is damaged (\(SystemErrorText.reason(error))); run: apimacro cache clear")
        }
        func when(_ time: Double?) -> String {
            guard let time else { return "-" }
            return "\(LocalTime.text(time)) (\(CacheStage.describeAge(now - time)) ago)"
        }
        return [
            "path     \(cache.file.path)",
            "entries  \(summary.entries)",
            "size     \(Self.megabytes(summary.bytes)) (limit \(Self.megabytes(cache.maximumBytes)))",
            "on disk  \(Self.megabytes(HTTPCache.diskBytes(directory: directory))) (the database, its WAL and index)",
            "oldest   \(when(summary.oldest))",
            "newest   \(when(summary.newest))",
        ]
    }

    /// Removes every stored response and gives the space back; says how many, and what the
    /// files took on disk before and take now (measured, not estimated).
    ///
    /// A database too damaged to open or empty is removed and made again.
    public func clear() throws -> String {
        let before = HTTPCache.diskBytes(directory: directory)
        var outcome: String
        do {
            let removed = try open().clear()
            outcome = "removed \(removed) cached \(removed == 1 ? "response" : "responses") from \(path)"
            // After a TRUNCATE checkpoint the WAL is empty, unless a reader held it.
            let wal = HTTPCache.diskBytes(directory: directory, suffixes: ["-wal"])
            if wal > 0 {
                outcome +=
                    " (another apimacro process was reading it: its WAL keeps \(Self.megabytes(wal)); "
                    + "clear again when no apimacro runs)"
            }
        } catch {
            try HTTPCache.destroy(directory: directory)
            _ = try open()
            outcome =
                "the HTTP cache \(path) was damaged (\(SystemErrorText.reason(error))); removed it and started an empty one"
        }
        let after = HTTPCache.diskBytes(directory: directory)
        return
            "\(outcome); freed \(Self.megabytes(max(0, before - after))), its files now take \(Self.megabytes(after))"
    }

    static func megabytes(_ bytes: Int) -> String {
        PrintfText.format("%.1f MB", Double(bytes) / 1_000_000)
    }
}
