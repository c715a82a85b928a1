/// A JSON string's escapes undone into UTF-8, as `json.loads` keeps them: the one-pass parser
/// (`JSONToPython`) and the tape's scan (`JSONTape`) both read strings through it.
enum JSONEscapes {
    /// Decodes the rest of a string into `out`, from `cursor` (past the opening quote and any
    /// plain bytes before the first backslash, which the caller has put in `out`) to just past
    /// the closing quote.
    ///
    /// A high surrogate followed by an escaped low one is one code point; a lone surrogate is
    /// kept as its three-byte form (read back with `surrogatepass`). Returns false for what
    /// JSON does not allow: an unknown escape, a bad `\u`, a control character, no closing quote.
    @inline(__always)
    static func decodeRest(
        _ cursor: inout UnsafePointer<UInt8>, end: UnsafePointer<UInt8>, into out: inout [UInt8]
    ) -> Bool {
        while cursor < end {
            let byte = cursor.pointee
            cursor += 1
            switch byte {
            case UInt8(ascii: "\""):
                return true
            case UInt8(ascii: "\\"):
                guard cursor < end else { return false }
                let escape = cursor.pointee
                cursor += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escape)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    guard var scalar = hex4(&cursor, end: end) else { return false }
                    if (0xD800...0xDBFF).contains(scalar), end - cursor >= 6, cursor[0] == UInt8(ascii: "\\"),
                        cursor[1] == UInt8(ascii: "u")
                    {
                        let mark = cursor
                        cursor += 2
                        if let low = hex4(&cursor, end: end), (0xDC00...0xDFFF).contains(low) {
                            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        } else {
                            cursor = mark
                        }
                    }
                    appendUTF8(scalar, to: &out)
                default:
                    return false
                }
            default:
                if byte < 0x20 { return false }
                out.append(byte)
            }
        }
        return false
    }

    /// Four hex digits after `\u`, or nil (the cursor then somewhere inside them).
    static func hex4(_ cursor: inout UnsafePointer<UInt8>, end: UnsafePointer<UInt8>) -> UInt32? {
        guard end - cursor >= 4 else { return nil }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = cursor.pointee
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt32(digit)
            cursor += 1
        }
        return value
    }

    /// `scalar` as UTF-8 (a surrogate as its three bytes, as `surrogatepass` reads them).
    static func appendUTF8(_ scalar: UInt32, to out: inout [UInt8]) {
        switch scalar {
        case 0..<0x80:
            out.append(UInt8(scalar))
        case 0x80..<0x800:
            out.append(UInt8(0xC0 | scalar >> 6))
            out.append(UInt8(0x80 | scalar & 0x3F))
        case 0x800..<0x10000:
            out.append(UInt8(0xE0 | scalar >> 12))
            out.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            out.append(UInt8(0x80 | scalar & 0x3F))
        default:
            out.append(UInt8(0xF0 | scalar >> 18))
            out.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            out.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            out.append(UInt8(0x80 | scalar & 0x3F))
        }
    }
}
