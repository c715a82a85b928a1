import Platform

/// The header of the cache's WAL index (the first 96 bytes of `cache.sqlite-shm`: SQLite's two
/// copies of its `WalIndexHdr`), read where SQLite maps it: whether anything was written to the
/// database since a moment before, told by a 96-byte compare.
///
/// Every commit by any connection of any process rewrites it (the WAL's last frame and its
/// checksums, or the salts of a WAL begun anew) before the commit's write lock is let go: a
/// header read the same as before means no transaction committed in between. A header caught
/// half written differs from its old self, so it reads as "changed" (the safe way).
///
/// The bytes are those of the writing connection's own mapping (`SQLiteConnection.walIndexRegion`),
/// held open here with that connection: never a descriptor of our own, whose `close` would
/// drop every one of this process's locks on the file (POSIX record locks), SQLite's included.
/// While the connection is open, its locks keep any other process from truncating the file.
final class WALIndexHeader: @unchecked Sendable {
    /// The header's bytes at one moment (96 of its 128).
    typealias Stamp = SIMD16<UInt64>

    static let byteCount = 96
    private let base: UnsafeRawPointer
    /// The connection whose mapping `base` is in: kept open as long as this header is read.
    private let writer: SQLiteDatabase

    /// The header of `writer`'s WAL index; nil when it has none mapped (not in WAL mode, no read
    /// yet): then nothing is remembered across lookups.
    init?(writer: SQLiteDatabase) {
        // No index file: not in WAL mode (xShmMap would make one). `access` opens nothing.
        guard access(writer.path + "-shm", F_OK) == 0,
            let address = try? writer.withConnection({ $0.walIndexRegion().map { UInt(bitPattern: $0) } }),
            let base = UnsafeRawPointer(bitPattern: address)
        else { return nil }
        self.base = base
        self.writer = writer
    }

    /// The header now.
    func stamp() -> Stamp {
        var stamp = Stamp(repeating: 0)
        withUnsafeMutableBytes(of: &stamp) { bytes in
            bytes.copyMemory(from: UnsafeRawBufferPointer(start: base, count: WALIndexHeader.byteCount))
        }
        return stamp
    }
}
