import Crypto
import Foundation

/// A Lua script for `EVALSHA`, with its SHA-1 digest (Redis names scripts by it).
struct RedisScript: Sendable {
    let text: String
    let digest: String

    init(_ text: String) {
        self.text = text
        digest = Insecure.SHA1.hash(data: Data(text.utf8)).hexString
    }
}
