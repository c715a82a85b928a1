import Foundation
import Glibc
import Synchronization
import Testing

@testable import Spawning

/// `NativeThread`: the C library's detached thread, named, with the stack asked for, and an error
/// instead of a silent no-op when it cannot start.
@Suite("NativeThread: a detached thread without Foundation")
struct NativeThreadTests {
    @Test("the body runs on another thread, which carries its name (15 bytes kept)")
    func runsNamed() async throws {
        let caller = pthread_self()
        let (name, other) = try await withCheckedThrowingContinuation {
            (continuation: CheckedContinuation<(String, Bool), any Error>) in
            do {
                try NativeThread.start(name: "apimacro-thread-test") {
                    let comm = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
                    continuation.resume(returning: (comm, pthread_equal(pthread_self(), caller) == 0))
                }
            } catch {
                continuation.resume(throwing: error)
            }
        }
        #expect(name == "apimacro-thread\n")
        #expect(other)
    }

    @Test("the stack asked for is the stack it gets (Python's threads need 8 MiB)")
    func stackSize() async throws {
        let size = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Int, any Error>) in
            do {
                try NativeThread.start(name: "stack", stackSize: 8 << 20) {
                    // pthread_getattr_np, a GNU extension the module map leaves out.
                    typealias GetAttributes = @convention(c) (pthread_t, UnsafeMutablePointer<pthread_attr_t>) -> Int32
                    let getAttributes = unsafeBitCast(
                        dlsym(UnsafeMutableRawPointer(bitPattern: 0), "pthread_getattr_np"), to: GetAttributes.self)
                    let attributes = UnsafeMutablePointer<pthread_attr_t>.allocate(capacity: 1)
                    defer { attributes.deallocate() }
                    var size = 0
                    if getAttributes(pthread_self(), attributes) == 0 {
                        pthread_attr_getstacksize(attributes, &size)
                        pthread_attr_destroy(attributes)
                    }
                    continuation.resume(returning: size)
                }
            } catch {
                continuation.resume(throwing: error)
            }
        }
        #expect(size == 8 << 20)
    }

    @Test("a stack below the C library's minimum is an error, and the body is not run")
    func startError() {
        let ran = Mutex(false)
        #expect(throws: NativeThread.StartError(code: EINVAL)) {
            try NativeThread.start(name: "tiny", stackSize: 1) { ran.withLock { $0 = true } }
        }
        #expect(ran.withLock { $0 } == false)
        #expect("\(NativeThread.StartError(code: EINVAL))" == "cannot start a thread: Invalid argument")
    }
}
