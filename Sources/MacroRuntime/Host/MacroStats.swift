import Foundation

/// What one macro run did on the network, handed from a `batch` child to its
/// parent through a small JSON file (the hidden `run --stats-file PATH`).
public struct MacroStats: Codable, Sendable, Equatable {
    /// Requests sent over the network.
    public var requests: Int
    /// Responses served from the HTTP cache.
    public var cacheHits: Int

    /// Counts given explicitly.
    public init(requests: Int, cacheHits: Int) {
        self.requests = requests
        self.cacheHits = cacheHits
    }

    /// The counts of `host`'s exchange log so far; zeros when there is no host
    /// (the run failed before Python started, so it made no request).
    public init(host: MacroHost?) {
        self.init(requests: host?.runtime.log.requests ?? 0, cacheHits: host?.runtime.log.cacheHits ?? 0)
    }

    /// Writes the counts to `file` (nil: does nothing). Errors are ignored: the
    /// parent then reports "-", which is all it could say anyway.
    public func write(to file: URL?) {
        guard let file, let data = try? JSONEncoder().encode(self) else { return }
        try? data.write(to: file, options: .atomic)
    }

    /// The counts a child wrote to `file`, or nil when it wrote none (it
    /// crashed, or was killed).
    public static func read(from file: URL) -> MacroStats? {
        guard let data = try? Data(contentsOf: file) else { return nil }
        return try? JSONDecoder().decode(MacroStats.self, from: data)
    }
}
