import FuzzSupport
import WebAPI

/// libFuzzer entry: any bytes as a server's JSON body, read the way the clients read error
/// envelopes, limits and pages' fields (`JSONValue.parse`, `JSONPath`, the plain Swift trees).
///
/// Must not crash or hang on any input (deep nesting, huge numbers, bad UTF-8, lone
/// surrogates); a document it accepts must write back to JSON that reads as the same document
/// (numbers compared by value: `3.0` may come back as `3`), and its plain Swift tree must turn
/// back into it.
@main
enum Fuzzer {
    static func main() { runFuzzer(fuzzerTestOneInput) }
}

/// libFuzzer's callback (also exported under its C name for libFuzzer's own `main`).
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt { fuzzJSONReader(fuzzInput(data, size)) }

func fuzzJSONReader(_ input: UnsafeBufferPointer<UInt8>) -> CInt {
    let bytes = Array(input)
    // What the clients read: a field by path (here the first key of each level, and index 0).
    _ = JSONPath.string(in: bytes, path: ["error", "message"])
    _ = JSONPath.string(in: bytes, path: ["0"])
    guard let document = JSONValue.parse(bytes) else { return 0 }
    let written = Array(document.text)
    guard let again = JSONValue.parse(written) else {
        preconditionFailure("wrote JSON it cannot read: \(String(decoding: written, as: UTF8.self))")
    }
    precondition(same(document, again), "the document changed on its way back through JSON")
    guard let native = JSONValue(native: document.native) else {
        preconditionFailure("its plain Swift tree does not turn back into JSON")
    }
    precondition(same(document, native), "the document changed on its way through plain Swift")
    return 0
}

/// Whether `a` and `b` are the same document, numbers compared by value.
func same(_ a: JSONValue, _ b: JSONValue) -> Bool {
    switch (a, b) {
    case (.null, .null): return true
    case (.bool(let x), .bool(let y)): return x == y
    case (.string(let x), .string(let y)): return x == y
    case (.array(let x), .array(let y)): return x.count == y.count && zip(x, y).allSatisfy { same($0, $1) }
    case (.object(let x), .object(let y)):
        return x.count == y.count && x.allSatisfy { key, value in y[key].map { same(value, $0) } ?? false }
    default:
        guard let x = number(a), let y = number(b) else { return false }
        return x == y
    }
}

func number(_ value: JSONValue) -> Double? {
    switch value {
    case .int(let number): Double(number)
    case .double(let number): number
    default: nil
    }
}
