import Platform
import PythonBridge
import Synchronization

/// SIGTERM and SIGHUP while a macro runs: they end it as Ctrl-C does
/// (`KeyboardInterrupt` in the macro, native waits stopped, the `--record` file
/// written), and the run exits 128 + the signal (143, 129).
///
/// Only a signal whose disposition is the default is taken over: one ignored
/// when apimacro started (`nohup` ignores SIGHUP) stays ignored.
final class TerminationSignals {
    /// Shared with the Python-level handler: the signal that arrived, 0 for none.
    private final class Received: Sendable {
        let signal = Atomic<Int32>(0)
    }

    private let received = Received()
    /// The Python-level handlers to put back, by signal number.
    private var previous: [(Int32, PyRef)] = []

    private init() {}

    /// The signal that ended the macro, if one did.
    var signal: Int32? {
        let value = received.signal.load(ordering: .acquiring)
        return value == 0 ? nil : value
    }

    /// The signals taken over now, as bits (1 << number): a child that `fork()` makes puts
    /// these back to their default.
    private static let takenOver = Atomic<UInt64>(0)
    /// Whether the after-fork hook is registered (once a process: Python keeps it for good).
    private static let forkHookRegistered = Atomic<Bool>(false)

    /// The signals taken over.
    static let handled: [(name: String, number: Int32)] = [("SIGTERM", SIGTERM), ("SIGHUP", SIGHUP)]

    /// Installs the handlers (GIL held), or nil off the thread that started Python, where Python
    /// cannot install signal handlers (an embedding test calls the runner from a worker thread).
    static func armIfPossible() -> TerminationSignals? {
        guard Interrupts.onMainThread else { return nil }
        do {
            return try arm()
        } catch {
            PythonRaise.clear()
            return nil
        }
    }

    /// Installs the handlers (GIL held, main thread).
    static func arm() throws -> TerminationSignals {
        let signals = TerminationSignals()
        let received = signals.received
        // `_signal`, the C module under `signal`: the same calls without loading enum, types and
        // functools into every macro (an empty macro imports no more than `python3 -c pass`).
        let module = try Interpreter.import("_signal")
        let handler = try NativeFunction.make("_on_termination") { arguments in
            var number: Int32 = SIGTERM
            if let first = arguments.positional.first, case .int(let value) = try PythonValue(python: first) {
                number = Int32(truncatingIfNeeded: value)
            }
            received.signal.store(number, ordering: .releasing)
            let name = handled.first { $0.number == number }?.name ?? "signal \(number)"
            PythonRaise.builtin(.keyboardInterrupt, "stopped by \(name)")
            throw PythonErrorSet()
        }
        for (name, number) in handled {
            let pythonNumber = try module.attribute(name)
            // SIG_DFL is 0 in `_signal`; an installed handler is a function, SIG_IGN is 1.
            let current = try module.callMethod("getsignal", [pythonNumber])
            guard case .int(0)? = try? PythonValue(python: current) else {
                PythonRaise.clear()
                continue
            }
            // Unblock it too: a supervisor may hand us a mask that blocks it.
            var unblock = sigset_t()
            sigemptyset(&unblock)
            sigaddset(&unblock, number)
            pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
            let old = try module.callMethod("signal", [pythonNumber, handler])
            signals.previous.append((number, old))
            Interrupts.chain(number)
            takenOver.bitwiseOr(1 << UInt64(number), ordering: .releasing)
        }
        if !signals.previous.isEmpty { try registerForkHook() }
        return signals
    }

    /// A child that `fork()` makes of the macro's process (a `multiprocessing` pool's worker)
    /// gets SIGTERM and SIGHUP back at their default, as in plain Python: `Pool.terminate()` ends
    /// its workers with SIGTERM, and a worker that turned it into `KeyboardInterrupt` could
    /// leave the pool's queue lock held, so that its sibling and the pool's exit waited forever.
    private static func registerForkHook() throws {
        guard
            forkHookRegistered.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing)
                .exchanged
        else { return }
        let hook = try NativeFunction.make("_default_termination_in_child") { _ in
            let module = try Interpreter.import("_signal")
            let bits = takenOver.exchange(0, ordering: .acquiringAndReleasing)
            for (_, number) in handled where bits & (1 << UInt64(number)) != 0 {
                _ = try module.callMethod(
                    "signal", [try PythonValue.int(Int(number)).toPython(), try PythonValue.int(0).toPython()])
            }
            return try PythonValue.none.toPython()
        }
        let posix = try Interpreter.import("posix")
        _ = try posix.callMethod("register_at_fork", [], kwargs: [("after_in_child", hook)])
    }

    /// Puts back the handlers that were there before (GIL held).
    func restore() {
        guard let module = try? Interpreter.import("_signal") else {
            PythonRaise.clear()
            return
        }
        for (number, handler) in previous {
            Self.takenOver.bitwiseAnd(~(1 << UInt64(number)), ordering: .releasing)
            if (try? module.callMethod("signal", [PythonValue.int(Int(number)).toPython(), handler])) == nil {
                PythonRaise.clear()
            }
        }
        previous = []
    }
}
