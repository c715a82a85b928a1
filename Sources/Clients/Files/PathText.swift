/// File paths as text, as `NSString`'s path methods read them (Foundation proper, which brings
/// ICU; FoundationEssentials has only `URL`'s).
public enum PathText {
    /// `path` without its last component, as `NSString.deletingLastPathComponent` gives it:
    /// `/a/b/` → `/a`, `/a` → `/`, `/` → `/`, `a` → ``, `a//b` → `a`.
    public static func deletingLastComponent(_ path: String) -> String {
        // On the bytes, with no array of another element type: `split` and `joined(separator:)`
        // over Substrings (and then an array of ranges) had the runtime build generic metadata
        // at the first call, 0.27 M instructions of every start.
        let slash = UInt8(ascii: "/")
        let bytes = Array(path.utf8)
        let absolute = bytes.first == slash
        var end = bytes.count
        while end > 0, bytes[end - 1] == slash { end -= 1 }
        while end > 0, bytes[end - 1] != slash { end -= 1 }
        // What is left, its runs of slashes made one and a trailing one dropped.
        var kept: [UInt8] = []
        kept.reserveCapacity(end)
        for byte in bytes[..<end] where byte != slash || kept.last != slash {
            kept.append(byte)
        }
        if kept.count > 1, kept.last == slash { kept.removeLast() }
        if kept.isEmpty, absolute { return "/" }
        return String(decoding: kept, as: UTF8.self)
    }
}
