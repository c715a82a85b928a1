import Foundation
import PythonBridge
import Testing

@Suite("GIL, exceptions and native functions")
struct BridgeTests {
    @Test("a Python thread keeps running while a native call waits without the GIL")
    func gilIsReleased() async throws {
        let (during, idle) = try await python {
            try fetching {
                let globals = try Interpreter.newGlobals()
                try Interpreter.exec(
                    """
                    import threading, time
                    state = {'n': 0, 'stop': False}
                    def spin():
                        while not state['stop']:
                            state['n'] += 1
                    worker = threading.Thread(target=spin)
                    worker.start()
                    """, globals: globals)
                // Read through the C API: evaluating bytecode here would let the
                // eval loop hand the GIL to the waiting thread.
                let count = { () throws -> Int in
                    guard let state = try globals.item("state"), let n = try state.item("n"),
                        case .int(let value) = try PythonValue(python: n)
                    else { return -1 }
                    return value
                }
                // Only a GIL-free wait lets the thread run (reading the counter runs
                // no bytecode); retry short waits in case another test holds the GIL.
                let start = try count()
                var during = 0
                for _ in 0..<50 where during < 10_000 {
                    try withoutGIL { try await Task.sleep(for: .milliseconds(100)) }
                    during = try count() - start
                }
                // Holding the GIL in a native busy wait: the thread must not advance.
                let held = try count()
                let until = Date().addingTimeInterval(0.2)
                while Date() < until {}
                let idle = try count() - held
                try Interpreter.exec("state['stop'] = True\nworker.join()", globals: globals)
                return (during, idle)
            }
        }
        #expect(during > 10_000, "the Python thread advanced \(during) while the GIL was released")
        #expect(idle == 0, "the Python thread advanced \(idle) while the GIL was held")
    }

    @Test("withoutGIL runs its work on the waiting thread itself, also after a suspension (no hop)")
    func workRunsOnCallingThread() async throws {
        let threads = try await python { () -> [UInt] in
            let caller = UInt(pthread_self())
            let seen = try withoutGIL { () async throws -> [UInt] in
                let before = UInt(pthread_self())
                try await Task.sleep(for: .milliseconds(1))
                let after = UInt(pthread_self())
                return [before, after, CallerThreadExecutor.current == nil ? 0 : 1]
            }
            return [caller] + seen
        }
        #expect(threads[1] == threads[0], "the work started on another thread")
        #expect(threads[2] == threads[0], "the work resumed on another thread")
        #expect(threads[3] == 1, "CallerThreadExecutor.current is set while the work runs")
        #expect(CallerThreadExecutor.current == nil)
    }

    @Test(
        "a task that outlives its withoutGIL call (as one given up after Ctrl-C's grace) runs to its end on the global executor",
        .timeLimit(.minutes(10)))
    func lateJobsRunAfterTheCall() async throws {
        let (gate, open) = AsyncStream<Void>.makeStream()
        // Whether the late job ran on a caller thread's executor (CallerThreadExecutor.current is
        // set only while a waiting call's thread runs its jobs), not a thread id: a new thread may
        // get the id of the call's thread once that one has ended.
        let (ended, end) = AsyncStream<Bool>.makeStream()
        try await python {
            try withoutGIL {
                guard let executor = CallerThreadExecutor.current else { return }
                // Runs on the call's executor, and is still waiting when the call returns.
                Task(executorPreference: executor) {
                    for await _ in gate { break }
                    end.yield(CallerThreadExecutor.current != nil)
                    end.finish()
                }
            }
        }
        // The call is over and its thread gone back to Python: the task's next job comes now.
        open.yield()
        var onCallerExecutor: Bool?
        for await flag in ended { onCallerExecutor = flag }
        #expect(onCallerExecutor != nil, "the late task never ran (stranded in the call's queue)")
        #expect(onCallerExecutor == false)
    }

    @Test("errors thrown without the GIL come back as Swift errors")
    func errorsCrossWithoutGIL() async throws {
        struct Boom: Error {}
        let caught = try await python {
            do {
                try withoutGIL { throw Boom() }
                return false
            } catch is Boom {
                return true
            }
        }
        #expect(caught)
    }

    @Test("fetching an exception gives its type, message and traceback text")
    func fetchException() async throws {
        let exception = try await python { () -> PythonException? in
            do {
                try Interpreter.exec("def f():\n    raise ValueError('boom ✓')\nf()", globals: Interpreter.newGlobals())
                return nil
            } catch {
                return PythonException.fetch()
            }
        }
        let fetched = try #require(exception)
        #expect(fetched.typeName == "ValueError")
        #expect(fetched.message == "boom ✓")
        #expect(fetched.traceback.contains("Traceback (most recent call last)"))
        #expect(fetched.traceback.contains("in f"))
        #expect(fetched.traceback.hasSuffix("ValueError: boom ✓\n"))
    }

    @Test("native functions bind arguments and raise Python's TypeErrors")
    func nativeFunction() async throws {
        let results = try await python {
            try fetching {
                let add = try NativeFunction.make("add", doc: "add(a, b=1)") { arguments in
                    let slots = try arguments.bind("add", ["a", "b"], required: 1)
                    guard case .int(let a) = try PythonValue(python: slots[0] ?? .none) else {
                        throw ConversionError.expected("int", got: slots[0]?.typeName ?? "None")
                    }
                    let b: Int
                    if let given = slots[1], case .int(let value) = try PythonValue(python: given) {
                        b = value
                    } else {
                        b = 1
                    }
                    return try PythonValue.int(a + b).toPython()
                }
                let globals = try Interpreter.newGlobals()
                try globals.setItem("add", add)
                try Interpreter.exec(
                    """
                    out = [add(1), add(1, 2), add(b=5, a=1), add.__doc__]
                    for call in (lambda: add(), lambda: add('x'), lambda: add(1, c=2), lambda: add(1, 2, 3), lambda: add(1, a=1)):
                        try:
                            call()
                        except TypeError as e:
                            out.append(str(e))
                    """, globals: globals)
                return try PythonValue(python: Interpreter.eval("out", globals: globals))
            }
        }
        #expect(
            results
                == .list([
                    .int(2), .int(3), .int(6), .string("add(a, b=1)"),
                    .string("add() missing required argument 'a'"),
                    .string("expected int, got 'str'"),
                    .string("add() got an unexpected keyword argument 'c'"),
                    .string("add() takes at most 2 positional arguments (3 given)"),
                    .string("add() got multiple values for argument 'a'"),
                ]))
    }

    final class Counter {
        var value = 0
    }

    @Test("native classes carry Swift state, methods and properties")
    func nativeClass() async throws {
        let results = try await python {
            try fetching {
                let builder = NativeClass<Counter>(name: "Counter", module: "testmod", doc: "A counter.")
                try builder.method("bump") { counter, arguments in
                    let slots = try arguments.bind("bump", ["by"])
                    var by = 1
                    if let given = slots[0], case .int(let n) = try PythonValue(python: given) { by = n }
                    counter.value += by
                    return try PythonValue.int(counter.value).toPython()
                }
                try builder.property("value") { try PythonValue.int($0.value).toPython() }
                try builder.build()
                let instance = try builder.instance(Counter())
                let globals = try Interpreter.newGlobals()
                try globals.setItem("c", instance)
                try globals.setItem("C", try #require(builder.type))
                return try PythonValue(
                    python: Interpreter.eval(
                        "(c.bump(), c.bump(by=4), c.value, type(c).__name__, C.__doc__, type(c).__module__)",
                        globals: globals))
            }
        }
        #expect(
            results
                == .tuple([.int(1), .int(5), .int(5), .string("Counter"), .string("A counter."), .string("testmod")]))
    }

    @Test("a native iterator: for, list, next and __next__ give the same items; errors and the end as Python's")
    func nativeIterator() async throws {
        let results = try await python {
            try fetching {
                let builder = NativeClass<Counter>(name: "Countdown", module: "testmod", doc: "Counts down.")
                try builder.iterator { counter in
                    guard counter.value > 0 else { return nil }
                    counter.value -= 1
                    if counter.value == 99 { throw ArgumentError("ninety-nine", raising: .valueError) }
                    return try PythonValue.int(counter.value).toPython().release()
                }
                try builder.build()
                let globals = try Interpreter.newGlobals()
                for (name, start) in [("a", 3), ("b", 3), ("c", 3), ("d", 100), ("e", 2)] {
                    let counter = Counter()
                    counter.value = start
                    try globals.setItem(name, builder.instance(counter))
                }
                try globals.setItem("C", try #require(builder.type))
                try Interpreter.exec(
                    """
                    out = [list(a), [x for x in b], iter(c) is c, next(c), c.__next__(), next(c), next(c, 'end')]
                    try:
                        c.__next__()
                    except StopIteration:
                        out.append('stop')
                    try:
                        next(d)
                    except ValueError as error:
                        out.append(str(error))
                    out.append(next(d))
                    C.__next__ = lambda self: 'patched'
                    out.append(next(e))
                    """, globals: globals)
                return try PythonValue(python: try #require(try globals.item("out")))
            }
        }
        #expect(
            results
                == .list([
                    .list([.int(2), .int(1), .int(0)]), .list([.int(2), .int(1), .int(0)]), .bool(true), .int(2),
                    .int(1), .int(0), .string("end"), .string("stop"), .string("ninety-nine"), .int(98),
                    .string("patched"),
                ]))
    }

    @Test("the embedded interpreter is Debian's, isolated from PYTHON* variables")
    func interpreterIdentity() async throws {
        let info = try await python {
            try fetching {
                try PythonValue(
                    python: evaluate(
                        "(sys.prefix, sys.flags.ignore_environment, sys.flags.utf8_mode, 'json' in sys.modules or __import__('json') is not None)",
                        setup: "import sys"))
            }
        }
        #expect(info == .tuple([.string("/usr"), .int(1), .int(1), .bool(true)]))
        #expect(Interpreter.minorVersion == "3.11")
    }
}
