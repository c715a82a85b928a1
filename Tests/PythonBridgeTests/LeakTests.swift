import PythonBridge
import Testing

/// Reference audits.
///
/// Each loop runs from Python code compiled under its own file name, and
/// `tracemalloc` counts only the allocations made while that code (and the
/// native calls it makes) runs, so other tests running at the same time cannot
/// disturb the figures.
///
/// Tracing is started once and never stopped in this process. Python 3.11's
/// `tracemalloc.stop()` races with a thread that entered the raw-allocator
/// hook without the GIL (as `PyGILState_Ensure` on a Swift thread does): that
/// thread then takes the GIL after the traceback buffer was freed and writes
/// through a null pointer (CPython gh-128679, fixed in 3.12 and later). It
/// crashed the whole test process about one run in four; `/usr/bin/python3`
/// shows it alone with a few threads calling `PyMem_RawMalloc` through ctypes
/// while the main thread starts and stops tracing.
@Suite("reference leaks", .serialized)
struct LeakTests {
    /// Calls `function` from a Python loop `count` times (after a warm-up) and
    /// returns how many traced blocks the loop's file still holds afterwards.
    static func retainedBlocks(calling function: PyRef, argument: String, count: Int) throws -> Int {
        let globals = try Interpreter.newGlobals()
        try globals.setItem("fn", function)
        let file = "<leak-audit>"
        try Interpreter.exec(
            """
            def loop(n):
                for i in range(n):
                    try:
                        fn(\(argument))
                    except (TypeError, ValueError):
                        pass
            """, globals: globals, filename: file)
        try Interpreter.exec(
            """
            import gc, tracemalloc
            loop(1000)
            gc.collect()
            if not tracemalloc.is_tracing():
                tracemalloc.start()
            keep = tracemalloc.Filter(True, \(try pythonString(file)))
            before = tracemalloc.take_snapshot().filter_traces([keep])
            loop(\(count))
            gc.collect()
            after = tracemalloc.take_snapshot().filter_traces([keep])
            retained = sum(stat.count_diff for stat in after.compare_to(before, 'filename'))
            """, globals: globals)
        guard let retained = try globals.item("retained"), case .int(let blocks) = try PythonValue(python: retained)
        else {
            return -1
        }
        return blocks
    }

    static func pythonString(_ text: String) throws -> String { try PythonValue.string(text).toPython().repr() }

    @Test("100,000 round trips Python → Swift → Python retain nothing")
    func roundTripsDoNotLeak() async throws {
        let retained = try await python {
            try fetching {
                let roundTrip = try NativeFunction.make("round_trip") { arguments in
                    try PythonValue(python: arguments.positional[0]).toPython()
                }
                return try Self.retainedBlocks(
                    calling: roundTrip,
                    argument: "{'v': i, 'tags': ['x', ('y', 2**70)], 'ok': True, 'b': b'xy', 'f': 0.5}",
                    count: 100_000)
            }
        }
        #expect(retained < 50, "\(retained) blocks retained after 100,000 round trips")
    }

    @Test("negative control: the same audit sees 10,000 references that are kept")
    func auditSeesALeak() async throws {
        let retained = try await python {
            try fetching {
                final class Keeper { var kept: [PyRef] = [] }
                let keeper = Keeper()
                let leaky = try NativeFunction.make("leaky") { arguments in
                    keeper.kept.append(try PythonValue(python: arguments.positional[0]).toPython())
                    return .none
                }
                return try Self.retainedBlocks(calling: leaky, argument: "[i, 'x']", count: 10_000)
            }
        }
        #expect(retained >= 10_000, "the audit saw only \(retained) retained blocks")
    }

    @Test("90,000 native calls, error paths included, retain nothing")
    func nativeCallsDoNotLeak() async throws {
        let retained = try await python {
            try fetching {
                let echo = try NativeFunction.make("echo") { arguments in
                    let slots = try arguments.bind("echo", ["value", "mode"], required: 1)
                    switch try slots[1].map({ try PythonValue(python: $0) }) {
                    case .some(.int(1)): throw ConversionError.expected("no failure", got: "int")
                    case .some(.int(2)):
                        return try PythonValue(python: try Interpreter.eval("{1}", globals: Interpreter.newGlobals()))
                            .toPython()
                    default: return try PythonValue(python: slots[0] ?? .none).toPython()
                    }
                }
                let calls = "{'a': [i]}, mode=i % 4 if i % 4 < 3 else None"
                return try Self.retainedBlocks(calling: echo, argument: calls, count: 90_000)
            }
        }
        #expect(retained < 50, "\(retained) blocks retained after 90,000 calls")
    }

    @Test("40,000 decodes from a tape, refusals and declines midway included, retain nothing")
    func tapeDecodesDoNotLeak() async throws {
        let (outcomes, retained) = try await python {
            try fetching { () -> ([String], Int) in
                let documents: [[UInt8]] = [
                    Array(
                        ("[{\"id\": 1, \"name\": \"x\u{e9}\", \"tags\": [\"a\", \"\\n\"], \"f\": 1.5, \"g\": 1e400, "
                            + "\"big\": 123456789012345678901234567890, \"n\": null}, {\"id\": 2, \"name\": \"yy\", "
                            + "\"tags\": [], \"f\": -0.0, \"g\": 0.1, \"big\": 1, \"n\": true, \"\\u0069d\": 3}]").utf8),
                    JSONToPythonTests.emptyObjects(200),
                    Array("[{\"a\": [1, 2, {\"b\": \"x".utf8) + [0xFF] + Array("\"}]}]".utf8),
                    Array(("[{\"k\": [1, \"two\"]}, 1" + String(repeating: "0", count: 5000) + "]").utf8),
                    // Dicts of one shape (copies) and repeated strings: whole, and refused inside a copy.
                    JSONTapeTests.records(20), JSONTapeTests.records(20),
                ]
                // A value; refused at a 5,000-byte budget; declined at invalid UTF-8; declined at an
                // int of 5,001 digits (past Python's limit): each after some objects were built.
                let budgets = [
                    JSONToPython.defaultBudget, 5_000, JSONToPython.defaultBudget, JSONToPython.defaultBudget,
                    JSONToPython.defaultBudget, 12_000,
                ]
                let tapes = documents.map { JSONTape.scan($0) }
                func decode(_ index: Int) -> JSONToPython.Outcome? {
                    guard let tape = tapes[index] else { return nil }
                    return documents[index].withUnsafeBufferPointer {
                        JSONToPython.decode($0, tape: tape, budget: budgets[index])
                    }
                }
                let outcomes = (0..<documents.count).map { index -> String in
                    switch decode(index) {
                    case .value: "value"
                    case .refused: "refused"
                    case .declined: "declined"
                    case nil: "no tape"
                    }
                }
                let function = try NativeFunction.make("tape_decode") { arguments in
                    guard case .int(let number) = try PythonValue(python: arguments.positional[0]),
                        case .value(let value) = decode(number % documents.count)
                    else { return .none }
                    return value
                }
                return (outcomes, try Self.retainedBlocks(calling: function, argument: "i", count: 40_000))
            }
        }
        #expect(outcomes == ["value", "refused", "declined", "declined", "value", "refused"])
        #expect(retained < 50, "\(retained) blocks retained after 40,000 decodes")
    }
}
