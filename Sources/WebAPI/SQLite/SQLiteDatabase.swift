import Dispatch
import Synchronization

/// A `SQLiteConnection` shared by threads: one caller at a time holds it, behind a lock (as
/// GRDB's `DatabaseQueue` serialised its connection).
///
/// `withConnection` runs on the calling thread; `withConnectionOffThread` runs on the
/// database's own serial queue and suspends the caller meanwhile, so a write that waits for
/// another process's lock (up to the busy timeout) does not hold a thread of the cooperative pool.
public final class SQLiteDatabase: @unchecked Sendable {
    // Touched only while `lock` is held: that is what makes the class Sendable.
    private let connection: SQLiteConnection
    private let lock = Mutex(())
    private let queue: DispatchQueue

    /// Shares `connection`; no one else may use it afterwards.
    public init(_ connection: consuming SQLiteConnection, label: String = "apimacro.sqlite") {
        self.connection = connection
        queue = DispatchQueue(label: label)
    }

    /// The file.
    public var path: String { connection.path }

    /// Runs `body` with the connection, on the calling thread, once no other caller holds it.
    public func withConnection<T: Sendable>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try lock.withLock { _ in try body(connection) }
    }

    /// Runs `body` with the connection on the database's serial queue; the caller is suspended,
    /// not blocked, until it is done.
    public func withConnectionOffThread<T: Sendable>(
        _ body: @escaping @Sendable (SQLiteConnection) throws -> T
    ) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result { try self.withConnection(body) })
            }
        }
    }
}
