import Crypto
public import Platform
import Synchronization

/// The HTTP cache's secret: 32 random bytes in `<APIMACRO_HOME>/cache.key`
/// (mode 0600, beside the credential store, not beside the cache), created
/// once.
///
/// From it come two keys: one that names entries (HMAC-SHA256 of the request
/// and its credentials, so the cache file cannot be used to test guesses of a
/// password) and one that seals what is stored (ChaChaPoly: bodies and headers
/// may echo tokens, so the file holds none in clear).
///
/// Losing the key file loses nothing but the cache: a new key is made and
/// the old entries, unreadable, count as misses and are replaced.
public struct CacheSecret: Sendable {
    /// The file name inside `APIMACRO_HOME`.
    public static let fileName = "cache.key"

    /// The naming and sealing keys, derived on first use: a macro that never reaches the
    /// cache never runs HKDF (about 1.2 M instructions of an empty macro's start).
    private let keys: Keys

    /// HMAC-SHA256 keyed with the naming key, its key block already hashed in: each name
    /// copies it and adds only the text (the pads are worked out once per process, not per call).
    private var naming: HMAC<SHA256> { keys.derived.naming }
    private var sealing: SymmetricKey { keys.derived.sealing }

    /// Derives the two keys once, on first use, and keeps them (and no longer what they
    /// were derived from: the closure holding the key file's bytes or a credential's material
    /// is dropped once it has run).
    private final class Keys: Sendable {
        typealias Pair = (naming: HMAC<SHA256>, sealing: SymmetricKey)
        private enum State {
            case pending(@Sendable () -> Pair)
            case derived(Pair)
        }
        private let state: Mutex<State>

        init(_ derive: @escaping @Sendable () -> Pair) { state = Mutex(.pending(derive)) }

        var derived: Pair {
            state.withLock { state in
                switch state {
                case .derived(let pair):
                    return pair
                case .pending(let derive):
                    let pair = derive()
                    state = .derived(pair)
                    return pair
                }
            }
        }
    }

    /// Reads `folder/cache.key`, creating it (and `folder`, mode 0700) when missing.
    ///
    /// Refuses a key file that is not a regular file or that others may read.
    public init(folder: URL) throws {
        self.init(bytes: try CacheSecret.load(folder.appendingPathComponent(CacheSecret.fileName)))
    }

    /// A secret from its 32 bytes (tests; `init(folder:)` for real use).
    public init(bytes: [UInt8]) {
        keys = Keys {
            let master = SymmetricKey(data: bytes)
            let naming = HMAC<SHA256>(
                key: HKDF<SHA256>.deriveKey(
                    inputKeyMaterial: master, info: Data("apimacro cache names v1".utf8), outputByteCount: 32))
            let sealing = HKDF<SHA256>.deriveKey(
                inputKeyMaterial: master, info: Data("apimacro cache contents v1".utf8), outputByteCount: 32)
            return (naming, sealing)
        }
    }

    /// A keyed digest of `text` (HMAC-SHA256), 32 bytes.
    public func name(_ text: String) -> [UInt8] {
        var hmac = naming
        var text = text
        text.withUTF8 { hmac.update(data: UnsafeRawBufferPointer($0)) }
        return Array(hmac.finalize())
    }

    /// `bytes` encrypted and authenticated, bound to `context` (the entry's name,
    /// so a sealed value moved to another entry does not open).
    public func seal(_ bytes: [UInt8], context: [UInt8]) throws -> [UInt8] {
        Array(try ChaChaPoly.seal(bytes, using: sealing, authenticating: context).combined)
    }

    /// What `seal` sealed, or nil when it was sealed with another key or for another context, or altered.
    public func unseal(_ sealed: some DataProtocol, context: [UInt8]) -> [UInt8]? {
        guard let box = try? ChaChaPoly.SealedBox(combined: sealed),
            let plain = try? ChaChaPoly.open(box, using: sealing, authenticating: context)
        else { return nil }
        return Array(plain)
    }

    /// The key file's 32 bytes, made atomically when missing: written under a
    /// temporary name, then linked into place, so two processes starting at once
    /// agree on one key and neither reads a half-written file.
    static func load(_ file: URL) throws -> [UInt8] {
        for _ in 0..<3 {
            if let bytes = try readKey(file) { return bytes }
            try makeFolder(file.deletingLastPathComponent())
            var fresh = [UInt8](repeating: 0, count: 32)
            var generator = SystemRandomNumberGenerator()
            for index in fresh.indices { fresh[index] = UInt8.random(in: .min ... .max, using: &generator) }
            let temporary = file.path + ".\(getpid()).\(UInt32.random(in: .min ... .max))"
            let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
            guard descriptor >= 0 else { throw problem(file, "cannot create it", errno: errno) }
            let written = fresh.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            _ = fsync(descriptor)
            _ = close(descriptor)
            defer { _ = unlink(temporary) }
            guard written == fresh.count else { throw problem(file, "cannot write it") }
            if link(temporary, file.path) == 0 { return fresh }
            guard errno == EEXIST else { throw problem(file, "cannot create it", errno: errno) }
            // Another process made it first: use theirs.
        }
        throw problem(file, "it keeps changing")
    }

    /// The key in `file`; nil when there is none.
    private static func readKey(_ file: URL) throws -> [UInt8]? {
        let descriptor = open(file.path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }
            throw problem(file, "cannot read it", errno: errno)
        }
        defer { _ = close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw problem(file, "it is not a regular file; remove it")
        }
        guard info.st_mode & 0o077 == 0 else {
            throw problem(file, "others may read it; run: chmod 600 \(file.path)")
        }
        var bytes = [UInt8](repeating: 0, count: 33)
        let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count == 32 else {
            throw problem(file, "it is not a cache key (32 bytes); remove it and the cache starts afresh")
        }
        return Array(bytes.prefix(32))
    }

    /// Creates `folder` (mode 0700) and missing parents.
    private static func makeFolder(_ folder: URL) throws {
        var info = stat()
        if stat(folder.path, &info) == 0 { return }
        let parent = folder.deletingLastPathComponent()
        if parent.path != folder.path { try makeFolder(parent) }
        if mkdir(folder.path, 0o700) != 0, errno != EEXIST {
            throw problem(folder, "cannot create the folder; check APIMACRO_HOME", errno: errno)
        }
    }

    private static func problem(_ file: URL, _ reason: String, errno code: Int32? = nil) -> APIError {
        let cause = code.map { " (\(String(cString: strerror($0))))" } ?? ""
        return APIError(.invalidRequest, "the HTTP cache key \(file.path): \(reason)\(cause)")
    }
}

extension CacheSecret {
    /// A naming and a sealing key derived from `material` by HKDF-SHA256 with `salt`, and
    /// the infos `naming` and `sealing` (the shared state's keys, `SharedCredential`).
    init(material: [UInt8], salt: [UInt8], naming: String, sealing: String) {
        keys = Keys {
            (
                HMAC<SHA256>(key: CacheSecret.derive(material, salt: salt, info: naming)),
                CacheSecret.derive(material, salt: salt, info: sealing)
            )
        }
    }

    /// HKDF-SHA256 of `material` with `salt` and `info`: a 32-byte key.
    static func derive(_ material: [UInt8], salt: [UInt8], info: String) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: material), salt: salt, info: Data(info.utf8), outputByteCount: 32)
    }
}
