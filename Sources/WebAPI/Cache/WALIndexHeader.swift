import Platform

/// The header of the cache's WAL index (the first 96 bytes of `cache.sqlite-shm`: SQLite's two
/// copies of its `WalIndexHdr`), mapped read-only: whether anything was written to the database
/// since a moment before, told by a 96-byte compare.
///
/// Every commit by any connection of any process rewrites it (the WAL's last frame and its
/// checksums, or the salts of a WAL begun anew) before the commit's write lock is let go: a
/// header read the same as before means no transaction committed in between. A header caught
/// half written differs from its old self, so it reads as "changed" (the safe way). SQLite maps
/// this file itself, shared by every connection to the database; it truncates it only when no
/// connection has the database open, and this process's writing connection keeps it open.
final class WALIndexHeader: @unchecked Sendable {
    /// The header's bytes at one moment (96 of its 128).
    typealias Stamp = SIMD16<UInt64>

    static let byteCount = 96
    private let base: UnsafeMutableRawPointer

    /// The header of the WAL index at `path` (`cache.sqlite-shm`); nil when there is none yet or
    /// it cannot be mapped (then nothing is remembered across lookups).
    init?(path: String) {
        let descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { Glibc.close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, Int(status.st_size) >= WALIndexHeader.byteCount,
            let mapped = mmap(nil, WALIndexHeader.byteCount, PROT_READ, MAP_SHARED, descriptor, 0),
            mapped != UnsafeMutableRawPointer(bitPattern: -1)
        else { return nil }
        base = mapped
    }

    deinit { munmap(base, WALIndexHeader.byteCount) }

    /// The header now.
    func stamp() -> Stamp {
        var stamp = Stamp(repeating: 0)
        withUnsafeMutableBytes(of: &stamp) { bytes in
            bytes.copyMemory(from: UnsafeRawBufferPointer(start: base, count: WALIndexHeader.byteCount))
        }
        return stamp
    }
}
