public import Platform
import Spawning

/// What one macro run did on the network, handed from a `batch` child to its
/// parent through a small JSON file (the hidden `run --stats-file PATH`; the
/// command line's `run` writes it from the host's exchange log).
public struct MacroStats: Codable, Sendable, Equatable {
    /// Requests the network answered, or with `--replay` the replay file.
    public var requests: Int
    /// Responses served from the HTTP cache.
    public var cacheHits: Int
    /// Its `apimacro.check`s in order, what was seen redacted (nil from a child that kept none).
    public var checks: [Check]?

    /// One `apimacro.check`.
    public struct Check: Codable, Sendable, Equatable {
        public var name: String
        public var passed: Bool
        /// What was seen, as `repr` shows it (redacted); nil when nothing was given.
        public var seen: String?

        public init(name: String, passed: Bool, seen: String? = nil) {
            self.name = name
            self.passed = passed
            self.seen = seen
        }
    }

    /// Counts given explicitly.
    public init(requests: Int, cacheHits: Int, checks: [Check]? = nil) {
        self.requests = requests
        self.cacheHits = cacheHits
        self.checks = checks
    }

    /// Writes the counts to `file` (nil: does nothing), whole or not at all.
    ///
    /// A failure is one line on stderr (the parent then reports "-" for the counts).
    public func write(to file: URL?) {
        guard let file, let data = try? JSONEncoder().encode(self) else { return }
        do {
            try ReportFile.write(String(decoding: data, as: UTF8.self), to: file, mode: 0o600)
        } catch {
            _ = DescriptorIO.writeAll(
                STDERR_FILENO, Array("apimacro: warning: the request counts were not kept: \(error)\n".utf8))
        }
    }

    /// The counts a child wrote to `file`, or nil when it wrote none (it
    /// crashed, or was killed).
    public static func read(from file: URL) -> MacroStats? {
        guard let data = try? Data(contentsOf: file) else { return nil }
        return try? JSONDecoder().decode(MacroStats.self, from: data)
    }
}
