import Foundation
import PythonBridge
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

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
        }
        return signals
    }

    /// Puts back the handlers that were there before (GIL held).
    func restore() {
        guard let module = try? Interpreter.import("_signal") else {
            PythonRaise.clear()
            return
        }
        for (number, handler) in previous {
            if (try? module.callMethod("signal", [PythonValue.int(Int(number)).toPython(), handler])) == nil {
                PythonRaise.clear()
            }
        }
        previous = []
    }
}
