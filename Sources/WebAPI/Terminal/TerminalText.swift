#if canImport(Glibc)
    import Glibc
#endif

/// Text from a server made safe to show on a terminal: a control character (C0 but the line
/// feed and the tab, DEL, and the C1 controls U+0080–U+009F, which some terminals obey as
/// escape sequences) is shown as an escape (`\x1b`, `\u009b`), so an answer cannot move the
/// cursor, retitle the window or rewrite what the user sees (as gh does for `gh api`).
public enum TerminalText {
    /// `bytes` (UTF-8, or not) with their control characters escaped; `json`: the text is JSON
    /// (whose writer escaped C0 already), and DEL and C1 become JSON's own escapes (`\u007f`).
    public static func escapingControls(_ bytes: [UInt8], json: Bool = false) -> [UInt8] {
        var shown: [UInt8] = []
        shown.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == 0xC2, index + 1 < bytes.count, (0x80...0x9F).contains(bytes[index + 1]) {
                shown += Array("\\u00\(hex(bytes[index + 1]))".utf8)
                index += 2
                continue
            }
            if byte == 0x7F && json {
                shown += Array("\\u007f".utf8)
            } else if (byte < 0x20 && byte != 0x0A && byte != 0x09 && !json) || byte == 0x7F {
                shown += Array("\\x\(hex(byte))".utf8)
            } else {
                shown.append(byte)
            }
            index += 1
        }
        return shown
    }

    /// Two lower-case hexadecimal digits.
    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789abcdef")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
    }

    /// `text` with its control characters escaped when `descriptor` is a terminal (else as it is).
    public static func shown(_ text: String, on descriptor: Int32) -> String {
        guard isatty(descriptor) == 1 else { return text }
        return String(decoding: escapingControls(Array(text.utf8)), as: UTF8.self)
    }
}
