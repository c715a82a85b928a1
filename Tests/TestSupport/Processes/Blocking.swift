import Foundation

/// Runs blocking work (a socket read, waiting for a process) on a thread of
/// its own and awaits it.
///
/// Blocking a thread of the cooperative pool instead starves every task on a
/// small machine (2 cores: 2 pool threads), and timers in other tests then fire
/// seconds late.
public func runBlocking<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
