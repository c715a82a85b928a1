import Crypto
import Platform

/// A Lua script for `EVALSHA`, with its SHA-1 digest (Redis names scripts by it).
struct RedisScript: Sendable, Equatable {
    let text: String
    let digest: String
    /// `EVALSHA` and the digest: the first two arguments of every call.
    let evalsha: [[UInt8]]

    init(_ text: String) {
        self.text = text
        digest = Insecure.SHA1.hash(data: Data(text.utf8)).hexString
        evalsha = [Array("EVALSHA".utf8), Array(digest.utf8)]
    }
}
