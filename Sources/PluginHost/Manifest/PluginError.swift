/// Why a plugin could not be loaded: the file, the key and what to write
/// instead, as one line.
///
/// A plugin that fails is reported and skipped; the host and every other plugin
/// keep working.
public struct PluginError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The manifest (or folder) at fault.
    public let file: String
    /// The dotted key at fault (`endpoints.find.path`), or nil for the whole file.
    public let key: String?
    /// The problem and the fix.
    public let problem: String

    /// An error about `key` of `file` (nil for the whole file).
    public init(file: String, key: String?, _ problem: String) {
        self.file = file
        self.key = key
        self.problem = problem
    }

    /// `FILE: KEY: PROBLEM`.
    public var description: String {
        [file, key, problem].compactMap { $0 }.joined(separator: ": ")
    }
}
