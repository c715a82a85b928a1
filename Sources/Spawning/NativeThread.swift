#if canImport(Glibc)
    import Glibc
#endif

/// A detached thread of the C library's, for blocking work: what Foundation's `Thread` did
/// here, without importing `Foundation` (whose ICU data would come with it).
public enum NativeThread {
    /// Why a thread could not be started (the C library's error, `EAGAIN` when the process or
    /// the system has too many).
    public struct StartError: Error, CustomStringConvertible, Equatable, Sendable {
        /// `pthread_create`'s error number.
        public let code: Int32

        public var description: String { "cannot start a thread: \(String(cString: strerror(code)))" }
    }

    /// Runs `body` on a new detached thread.
    ///
    /// - Parameters:
    ///   - name: the thread's name as tools show it (`top -H`, a debugger); the C library keeps
    ///     the first 15 bytes.
    ///   - stackSize: the stack's size in bytes; nil for the C library's default (the stack
    ///     limit, 8 MiB as a rule).
    ///   - body: the work; the thread ends when it returns.
    /// - Throws: `StartError` when the thread cannot be created; `body` is then not run.
    public static func start(
        name: String, stackSize: Int? = nil, _ body: @escaping @Sendable () -> Void
    ) throws(StartError) {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        if let stackSize {
            let status = pthread_attr_setstacksize(&attributes, stackSize)
            guard status == 0 else { throw StartError(code: status) }
        }
        let job = Unmanaged.passRetained(Job(name: name, body: body)).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(&thread, &attributes, entry, job)
        guard status == 0 else {
            Unmanaged<Job>.fromOpaque(job).release()
            throw StartError(code: status)
        }
    }

    /// The new thread's first function: names the thread and runs its job.
    private static let entry: @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? = { context in
        guard let context else { return nil }
        let job = Unmanaged<Job>.fromOpaque(context).takeRetainedValue()
        if let setName {
            _ = setName(pthread_self(), job.name.utf8.prefix(15).map { CChar(bitPattern: $0) } + [0])
        }
        job.body()
        return nil
    }

    /// `pthread_setname_np`, which the C library's module map leaves out (it is a GNU
    /// extension): looked up once.
    private static let setName: (@convention(c) (pthread_t, UnsafePointer<CChar>) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "pthread_setname_np") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (pthread_t, UnsafePointer<CChar>) -> Int32).self)
    }()

    /// What the new thread is handed (its name and its work), retained until it starts.
    private final class Job: Sendable {
        let name: String
        let body: @Sendable () -> Void

        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }
}
