import CPython
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A native wait in a child process that `fork()` made of the process running Python
/// (`multiprocessing`'s default start method on Linux, `os.fork()`): refused, as the child
/// has none of the parent's threads (Swift's executors, the transfer thread) and shares its
/// connections and cache files.
///
/// Pure-Python work in such a child runs as usual.
public struct ForkedChildError: Error, Sendable, CustomStringConvertible, PythonRaisable {
    public var description: String {
        "apimacro's native calls (clients, request, map, sleep) cannot run in a child process made by fork() "
            + "(multiprocessing's default on Linux): its threads and connections belong to the parent. "
            + "Call them from threads or apimacro.map instead (network waits release the GIL), "
            + "and keep the child's work pure Python"
    }

    /// The process that started the interpreter.
    private static let owner = Atomic<Int32>(0)

    /// Remembers the current process as the interpreter's (`Interpreter.start`).
    static func recordOwner() {
        owner.store(getpid(), ordering: .relaxed)
    }

    /// Whether this is a forked child of the process that started the interpreter.
    static var isForkedChild: Bool {
        let recorded = owner.load(ordering: .relaxed)
        return recorded != 0 && recorded != getpid()
    }

    public func raiseInPython() { PythonRaise.builtin(.runtimeError, description) }
}
