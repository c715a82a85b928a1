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

    /// The process that started the interpreter (0 before `recordOwner`).
    private static let owner = Atomic<Int32>(0)
    /// Set in a child of `fork()` by the handler `recordOwner` registers, and inherited by
    /// its children: one atomic load a native call instead of a `getpid()` system call.
    private static let forked = Atomic<Bool>(false)

    /// Remembers the current process as the interpreter's (`Interpreter.start`), and, the
    /// first time, registers the `pthread_atfork` child handler that marks a forked child
    /// (glibc runs it in the child of every `fork()`, `os.fork()` and `multiprocessing`'s
    /// included; a `posix_spawn` or `vfork` child runs no Swift before it execs).
    static func recordOwner() {
        let (first, _) = owner.compareExchange(expected: 0, desired: getpid(), ordering: .relaxed)
        guard first else { return }
        pthread_atfork(nil, nil) { ForkedChildError.forked.store(true, ordering: .relaxed) }
    }

    /// Whether this is a forked child of the process that started the interpreter.
    static var isForkedChild: Bool { forked.load(ordering: .relaxed) }

    public func raiseInPython() { PythonRaise.builtin(.runtimeError, description) }
}
