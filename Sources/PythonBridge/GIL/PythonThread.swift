import Spawning

/// Runs Python work on a dedicated thread with the GIL held and awaits it.
///
/// Use it from async code: blocking the cooperative pool with a GIL wait (or
/// with `withoutGIL`, which parks its caller) can starve the very tasks the
/// wait depends on.
public func onPythonThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        do {
            try NativeThread.start(name: "apimacro-python", stackSize: 8 << 20) {
                continuation.resume(with: Result { try withGIL(body) })
            }
        } catch {
            continuation.resume(throwing: error)
        }
    }
}
