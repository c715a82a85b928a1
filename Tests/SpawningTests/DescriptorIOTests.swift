import Glibc
import Testing

@testable import Spawning

/// `DescriptorIO`: whole writes and bounded reads, through a pipe whose writer writes in pieces.
@Suite("DescriptorIO: reads and writes that survive short transfers")
struct DescriptorIOTests {
    /// A pipe holding `bytes`, its write end closed.
    static func pipe(holding bytes: [UInt8]) throws -> Int32 {
        var ends: [Int32] = [0, 0]
        try #require(Glibc.pipe(&ends) == 0)
        #expect(DescriptorIO.writeAll(ends[1], bytes))
        close(ends[1])
        return ends[0]
    }

    @Test("readPrefix gives the first count bytes, or all there are", arguments: [0, 1, 16, 4_000, 5_000])
    func prefix(count: Int) throws {
        let bytes = (0..<4_000).map { UInt8(truncatingIfNeeded: $0) }
        let fd = try Self.pipe(holding: bytes)
        defer { close(fd) }
        #expect(DescriptorIO.readPrefix(fd, count: count) == Array(bytes.prefix(count)))
    }

    @Test("a write to a pipe whose reader has gone is false, not a crash")
    func readerGone() throws {
        var ends: [Int32] = [0, 0]
        try #require(Glibc.pipe(&ends) == 0)
        close(ends[0])
        let previous = signal(SIGPIPE, SIG_IGN)
        defer {
            signal(SIGPIPE, previous)
            close(ends[1])
        }
        #expect(!DescriptorIO.writeAll(ends[1], [1, 2, 3]))
    }
}
