import Clients
import Foundation

/// `apimacro cache info | clear`: what the HTTP cache holds, or emptying it.
public struct CacheReport: Sendable {
    private let cache: HTTPCache

    /// Opens the cache the settings name (`$XDG_CACHE_HOME/apimacro`).
    public init(settings: Settings) throws {
        cache = try HTTPCache(directory: settings.cacheDirectory)
    }

    /// Where the cache is, how many responses and bytes it holds, and how old they are: one line each.
    public func info(now: Double = Date().timeIntervalSince1970) throws -> [String] {
        let summary = try cache.summary()
        func when(_ time: Double?) -> String {
            guard let time else { return "-" }
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withFullDate, .withTime, .withColonSeparatorInTime, .withSpaceBetweenDateAndTime]
            formatter.timeZone = .current
            return "\(formatter.string(from: Date(timeIntervalSince1970: time))) (\(CacheStage.describeAge(now - time)) ago)"
        }
        return [
            "path     \(cache.file.path)",
            "entries  \(summary.entries)",
            "size     \(Self.megabytes(summary.bytes)) (limit \(Self.megabytes(cache.maximumBytes)))",
            "oldest   \(when(summary.oldest))",
            "newest   \(when(summary.newest))",
        ]
    }

    /// Removes every stored response; says how many.
    public func clear() throws -> String {
        let removed = try cache.clear()
        return "removed \(removed) cached \(removed == 1 ? "response" : "responses") from \(cache.file.path)"
    }

    static func megabytes(_ bytes: Int) -> String {
        String(format: "%.1f MB", Double(bytes) / 1_000_000)
    }
}
