/// File paths as text, as `NSString`'s path methods read them (Foundation proper, which brings
/// ICU; FoundationEssentials has only `URL`'s).
public enum PathText {
    /// `path` without its last component, as `NSString.deletingLastPathComponent` gives it:
    /// `/a/b/` → `/a`, `/a` → `/`, `/` → `/`, `a` → ``, `a//b` → `a`.
    public static func deletingLastComponent(_ path: String) -> String {
        // On the bytes: `split` and `joined(separator:)` over Substrings sent the runtime
        // building generic metadata, 0.27 M instructions at its first call (every start).
        let slash = UInt8(ascii: "/")
        let bytes = Array(path.utf8)
        var parts: [Range<Int>] = []
        var index = 0
        while index < bytes.count {
            while index < bytes.count, bytes[index] == slash { index += 1 }
            let start = index
            while index < bytes.count, bytes[index] != slash { index += 1 }
            if index > start { parts.append(start..<index) }
        }
        let absolute = bytes.first == slash
        guard !parts.isEmpty else { return absolute ? "/" : "" }
        parts.removeLast()
        var kept: [UInt8] = absolute ? [slash] : []
        for (number, part) in parts.enumerated() {
            if number > 0 { kept.append(slash) }
            kept.append(contentsOf: bytes[part])
        }
        return String(decoding: kept, as: UTF8.self)
    }
}
