import FuzzSupport
import PythonBridge

/// libFuzzer entry: any bytes as a JSON response body, decoded the way macros get them
/// (the native `JSONToPython` fast path, checked against CPython's `json.loads`, the reference),
/// then converted to Swift values and back.
///
/// Must not crash, leak or hang on any input (deep nesting, huge numbers, bad UTF-8, NaN), and
/// the round trip must give an equal document.
@main
enum Fuzzer {
    static func main() { runFuzzer(fuzzerTestOneInput) }
}

/// libFuzzer's callback (also exported under its C name for libFuzzer's own `main`).
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt { fuzzJSONPython(fuzzInput(data, size)) }

func fuzzJSONPython(_ input: UnsafeBufferPointer<UInt8>) -> CInt {
    let bytes = Array(input)
    JSONPythonFuzzer.shared.run(bytes)
    return 0
}

/// The interpreter, started once for the whole fuzzing run, and a leak check: Python's live
/// memory blocks, measured every `interval` inputs after a warm-up, must not keep growing.
final class JSONPythonFuzzer: @unchecked Sendable {
    static let shared = JSONPythonFuzzer()
    private var runs = 0
    private var baseline: Int?
    private let interval = 5_000
    /// Growth allowed over the baseline: caches settle (CPython's attribute cache keeps a name in
    /// each of its 4,096 entries, the decoder's key table up to 1,024 keys; measured, the count
    /// moves within ~1,000 over 900,000 inputs), a leak of even one object per input does not.
    private let allowance = 4_000

    private init() {
        do {
            try Interpreter.start()
        } catch {
            preconditionFailure("cannot start Python: \(error)")
        }
    }

    func run(_ bytes: [UInt8]) {
        withGIL {
            // Counted once this input's objects are gone: counted inside `check`, the document
            // (three copies of it) was alive, and one of 36 KB made a false leak of ~7,600 blocks.
            if check(bytes), runs % interval == 0 {
                do {
                    try checkLiveBlocks()
                } catch {
                    preconditionFailure("unexpected error: \(error)")
                }
            }
        }
    }

    /// One input through both decoders and back; true (and counted in `runs`) when it got through.
    private func check(_ bytes: [UInt8]) -> Bool {
        do {
            let json = try Interpreter.import("json")
            let loads = try json.attribute("loads")
            // The native fast path (what macros get first) must agree with json.loads whenever
            // it answers: the same json.dumps text (types, key order, floats, NaN, surrogates).
            let fast = bytes.withUnsafeBufferPointer { JSONToPython.parse($0) }
            precondition(!PythonRaise.isSet, "JSONToPython.parse left an exception set")
            // The two-step decode (a page ahead's: `JSONTape.scan` without the GIL, then the
            // objects from the tape) must answer as the one-pass parser does, value or not.
            let twoStep = bytes.withUnsafeBufferPointer { body -> PyRef? in
                guard let tape = JSONTape.scan(body) else { return nil }
                guard case .value(let value) = JSONToPython.decode(body, tape: tape) else { return nil }
                return value
            }
            precondition(!PythonRaise.isSet, "JSONToPython.decode(_:tape:) left an exception set")
            let document: PyRef
            do {
                document = try loads.call([try PythonValue.bytes(bytes).toPython()])
            } catch is PythonErrorSet {
                _ = PythonException.fetch()
                precondition(fast == nil, "JSONToPython.parse took a document json.loads rejects")
                precondition(twoStep == nil, "the tape's decode took a document json.loads rejects")
                return false
            }
            let dumps = try json.attribute("dumps")
            if let fast {
                let mine = try dumps.call([fast]).str()
                let theirs = try dumps.call([document]).str()
                precondition(
                    mine == theirs,
                    "JSONToPython.parse and json.loads disagree: \(mine.prefix(200)) vs \(theirs.prefix(200))")
            }
            // A tape is made only of documents the one-pass grammar takes whole: where the tape's
            // decode answers, the one-pass parser answers the same.
            if let twoStep {
                precondition(fast != nil, "the tape's decode took a document the one-pass parser declines")
                let mine = try dumps.call([twoStep]).str()
                let theirs = try dumps.call([document]).str()
                precondition(
                    mine == theirs,
                    "the tape's decode and json.loads disagree: \(mine.prefix(200)) vs \(theirs.prefix(200))")
            }
            let value: PythonValue
            do {
                value = try PythonValue(python: document)
            } catch is PythonErrorSet {
                // JSON may hold a lone surrogate ("\ud82d"), which no Swift String can: that must be
                // a UnicodeEncodeError (as a macro passing such a str to a client gets), nothing else.
                let exception = PythonException.fetch()
                precondition(
                    exception?.typeName == "UnicodeEncodeError",
                    "json.loads output did not convert: \(exception?.description ?? "?")")
                return false
            }
            let back = try value.toPython()
            let again = try PythonValue(python: back)
            precondition(again == value || value.containsNaN, "round trip changed the document")
            runs += 1
            return true
        } catch {
            preconditionFailure("unexpected error: \(error)")
        }
    }
}

extension JSONPythonFuzzer {
    /// Fails when Python holds more live blocks than after the first `interval` inputs, plus the allowance.
    func checkLiveBlocks() throws {
        _ = try Interpreter.import("gc").callMethod("collect")
        let blocks = try PythonValue(python: try Interpreter.import("sys").callMethod("getallocatedblocks"))
        guard case .int(let live) = blocks else { return }
        guard let baseline else {
            self.baseline = live
            return
        }
        precondition(live - baseline < allowance, "Python's live blocks grew from \(baseline) to \(live): a leak")
    }
}

extension PythonValue {
    /// NaN is never equal to itself, so documents holding one cannot be compared.
    var containsNaN: Bool {
        var stack = [self]
        while let value = stack.popLast() {
            switch value {
            case .float(let number) where number.isNaN: return true
            case .list(let items), .tuple(let items): stack += items
            case .dict(let entries): stack += entries.flatMap { [$0.key, $0.value] }
            default: continue
            }
        }
        return false
    }
}
