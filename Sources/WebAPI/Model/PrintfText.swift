#if canImport(Glibc)
    import Glibc
#endif

/// `printf`-style text (`%.3f`, `%02x`) without Foundation's `String(format:)`, which is not
/// in `FoundationEssentials` and costs ~1 M instructions the first time (CoreFoundation's
/// formatter starting up).
///
/// The C library's `vsnprintf` writes the text: `String(format:)` hands each number to the
/// same C formatting, in the C locale, so the text is the same byte for byte (the output
/// snapshots, `FormattingSnapshotTests`, and `PrintfTextTests` hold it to that).
public enum PrintfText {
    /// `format` with `arguments`, as C's `printf` writes them.
    public static func format(_ format: String, _ arguments: any CVarArg...) -> String {
        var capacity = 64
        while true {
            var buffer = [CChar](repeating: 0, count: capacity)
            let count = withVaList(arguments) { list in
                buffer.withUnsafeMutableBufferPointer { vsnprintf($0.baseAddress, capacity, format, list) }
            }
            guard count >= 0 else { return "" }
            if Int(count) < capacity {
                return String(decoding: buffer.prefix(Int(count)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            }
            capacity = Int(count) + 1
        }
    }
}
