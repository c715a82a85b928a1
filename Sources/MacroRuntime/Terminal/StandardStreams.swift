import Spawning

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The process's own standard streams through the C library: what `FileHandle.standardError`
/// and its kin did, without Foundation proper (and the ICU data it brings).
public enum StandardStreams {
    /// Writes all of `text` to standard error (going on after a signal or a partial write;
    /// what a reader that has gone does not take is dropped).
    public static func error(_ text: String) {
        _ = DescriptorIO.writeAll(STDERR_FILENO, Array(text.utf8))
    }

    /// Writes all of `text` to standard output, as `error` does to standard error.
    public static func output(_ text: String) {
        _ = DescriptorIO.writeAll(STDOUT_FILENO, Array(text.utf8))
    }

    /// Standard input read to its end.
    public static func readInput() -> [UInt8] {
        DescriptorIO.readAll(STDIN_FILENO, limit: .max)
    }
}
