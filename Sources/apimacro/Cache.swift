import ArgumentParser
import Clients
import Foundation
import MacroRuntime

/// `apimacro cache info | clear`.
struct Cache: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The HTTP cache under $XDG_CACHE_HOME/apimacro: what it holds, or empty it.",
        subcommands: [Info.self, Clear.self])

    /// `apimacro cache info`.
    struct Info: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Where the cache is, how many responses and bytes it holds, and how old they are.")

        func run() throws {
            let cache = try HTTPCache(directory: Settings().cacheDirectory)
            let summary = try cache.summary()
            let now = Date().timeIntervalSince1970
            func when(_ time: Double?) -> String {
                guard let time else { return "-" }
                let formatter = ISO8601DateFormatter()
                formatter.formatOptions = [.withFullDate, .withTime, .withColonSeparatorInTime, .withSpaceBetweenDateAndTime]
                formatter.timeZone = .current
                return "\(formatter.string(from: Date(timeIntervalSince1970: time))) (\(CacheStage.describeAge(now - time)) ago)"
            }
            print("path     \(cache.file.path)")
            print("entries  \(summary.entries)")
            print("size     \(Cache.megabytes(summary.bytes)) (limit \(Cache.megabytes(cache.maximumBytes)))")
            print("oldest   \(when(summary.oldest))")
            print("newest   \(when(summary.newest))")
        }
    }

    /// `apimacro cache clear`.
    struct Clear: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove every stored response.")

        func run() throws {
            let cache = try HTTPCache(directory: Settings().cacheDirectory)
            let removed = try cache.clear()
            print("removed \(removed) cached \(removed == 1 ? "response" : "responses") from \(cache.file.path)")
        }
    }

    static func megabytes(_ bytes: Int) -> String {
        String(format: "%.1f MB", Double(bytes) / 1_000_000)
    }
}
