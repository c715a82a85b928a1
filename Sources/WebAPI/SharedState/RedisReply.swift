/// One reply of a Redis server, copied out of hiredis's reply object.
public enum RedisReply: Sendable, Equatable {
    case string([UInt8])
    case status(String)
    case integer(Int64)
    case array([RedisReply])
    case null
    /// An error reply (`-ERR …`, `-NOSCRIPT …`, `-WRONGPASS …`).
    case error(String)

    /// The reply as a number (an integer, or a string holding one).
    public var integer: Int64? {
        switch self {
        case .integer(let value): value
        case .string(let bytes): Int64(String(decoding: bytes, as: UTF8.self))
        default: nil
        }
    }

    /// The bytes of a bulk string; nil for anything else.
    public var bytes: [UInt8]? {
        if case .string(let bytes) = self { return bytes }
        return nil
    }

    /// The elements of an array reply; empty for anything else.
    public var elements: [RedisReply] {
        if case .array(let items) = self { return items }
        return []
    }
}
