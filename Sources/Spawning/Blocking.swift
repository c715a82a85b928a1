#if canImport(Glibc)
    import Glibc
#endif

/// Runs blocking work (a child's pipes, a wait on a descriptor) on a thread of its own and
/// suspends the calling task until it is done: Swift's cooperative pool never blocks on it.
public enum Blocking {
    /// `body`'s result, computed on a new thread.
    public static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            do {
                try NativeThread.start(name: "apimacro-block") { continuation.resume(with: Result { try body() }) }
            } catch {
                continuation.resume(throwing: error)
            }
        }
    }
}

/// Reads and writes that go on after a signal interrupts them (EINTR).
public enum DescriptorIO {
    /// Writes all of `bytes` to `descriptor`; false when it cannot (the reader has gone).
    public static func writeAll(_ descriptor: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return false }
            offset += written
        }
        return true
    }

    /// The first `count` bytes of `descriptor` (fewer at its end; after a failed read, those read
    /// before), read straight into the array's storage.
    public static func readPrefix(_ descriptor: Int32, count: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: max(0, count)) { buffer, initialized in
            initialized = 0
            while initialized < buffer.count, let base = buffer.baseAddress {
                let got = read(descriptor, base + initialized, buffer.count - initialized)
                if got < 0 && errno == EINTR { continue }
                guard got > 0 else { break }
                initialized += got
            }
        }
    }

    /// Reads `descriptor` to its end, keeping at most `limit` bytes (the rest is read and dropped).
    public static func readAll(_ descriptor: Int32, limit: Int) -> [UInt8] {
        var kept: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            if kept.count < limit { kept += chunk[0..<min(count, limit - kept.count)] }
        }
        return kept
    }
}
