import FuzzSupport

@testable import PluginHost

/// libFuzzer entry: any bytes as a TOML document (`config.toml`, `plugin.toml`).
///
/// Parsing must give a table or one `TOMLSyntaxError` whose message is one line of visible
/// text (never a crash, a hang, or an error of another kind); a table that parses, written back
/// as TOML, must parse again to the same table.
@main
enum Fuzzer {
    static func main() { runFuzzer(fuzzerTestOneInput) }
}

/// libFuzzer's callback (also exported under its C name for libFuzzer's own `main`).
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt { fuzzTOML(fuzzInput(data, size)) }

func fuzzTOML(_ input: UnsafeBufferPointer<UInt8>) -> CInt {
    let text = String(decoding: input, as: UTF8.self)
    let document: [String: TOMLValue]
    do {
        document = try TOMLValue.parse(text)
    } catch let error as TOMLSyntaxError {
        precondition(error.line >= 1 && error.column >= 1, "no position: \(error)")
        precondition(
            !error.message.unicodeScalars.contains { TOMLParser.isInvisible($0) },
            "the message holds an invisible character: \(error.message.debugDescription)")
        return 0
    } catch {
        preconditionFailure("not a TOMLSyntaxError: \(error)")
    }
    // Written back inline, a document nests deeper than its headers made it: checked while shallow.
    guard depth(.table(document)) < TOMLParser.maximumDepth / 2 else { return 0 }
    let written = document.keys.sorted().map { "\(key($0)) = \(toml(document[$0] ?? .bool(false)))\n" }.joined()
    do {
        let again = try TOMLValue.parse(written)
        precondition(same(.table(again), .table(document)), "written back differently: \(written.debugDescription)")
    } catch {
        preconditionFailure("written back, it does not parse (\(error)): \(written.debugDescription)")
    }
    return 0
}

/// The value as TOML (inline tables and arrays; strings as basic strings, every control escaped).
func toml(_ value: TOMLValue) -> String {
    switch value {
    case .string(let string): return quoted(string)
    case .integer(let integer): return String(integer)
    case .double(let double):
        if double.isNaN { return "nan" }
        if double.isInfinite { return double < 0 ? "-inf" : "inf" }
        return String(double)
    case .bool(let bool): return bool ? "true" : "false"
    case .array(let items): return "[" + items.map(toml).joined(separator: ", ") + "]"
    case .table(let table):
        return "{"
            + table.keys.sorted().map { "\(key($0)) = \(toml(table[$0] ?? .bool(false)))" }.joined(separator: ", ")
            + "}"
    case .other(let text): return text
    }
}

func key(_ name: String) -> String { quoted(name) }

func quoted(_ string: String) -> String {
    var out = "\""
    for scalar in string.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case _ where scalar.value < 0x20 || scalar.value == 0x7F:
            let hex = String(scalar.value, radix: 16)
            out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out + "\""
}

func depth(_ value: TOMLValue) -> Int {
    switch value {
    case .array(let items): 1 + (items.map(depth).max() ?? 0)
    case .table(let table): 1 + (table.values.map(depth).max() ?? 0)
    default: 0
    }
}

/// Equal, a NaN being the same as any NaN.
func same(_ a: TOMLValue, _ b: TOMLValue) -> Bool {
    switch (a, b) {
    case (.double(let x), .double(let y)): return (x.isNaN && y.isNaN) || x.bitPattern == y.bitPattern
    case (.array(let x), .array(let y)): return x.count == y.count && zip(x, y).allSatisfy { same($0, $1) }
    case (.table(let x), .table(let y)):
        return x.count == y.count && x.allSatisfy { key, value in y[key].map { same(value, $0) } ?? false }
    default: return a == b
    }
}
