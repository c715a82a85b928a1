import Foundation
import Testing
import WebAPI

/// `PrintfText` against the `String(format:)` it replaced: the same text for every format the
/// sources use, over values that reach each rounding and width edge.
@Suite("PrintfText")
struct PrintfTextTests {
    static let doubles: [Double] = [
        0, -0.0, 0.05, 0.15, 0.25, 0.35, 0.45, 0.5, 0.95, 1, 1.0005, 1.2345, 2.5, 9.95, 9.9999, 99.95,
        1 / 3, 2 / 3, 123_456.789, 1e15, 9_999_999_999_999_998, 1e16, 1e20, 1e300, -1e300, 2.5e-7,
        -3, -0.05, -2.675, 0.125, 0.375, 1.005, 1.015, 12_345_678.901_234, .pi, -.pi,
    ]

    @Test("%.1f, %.2f, %.3f and %.1f MB as String(format:) wrote them")
    func fractions() {
        for value in Self.doubles {
            for format in ["%.1f", "%.2f", "%.3f", "%.1f MB"] {
                #expect(PrintfText.format(format, value) == String(format: format, value), "\(format) \(value)")
            }
        }
    }

    @Test("%02x, %%%02X and %04o as String(format:) wrote them")
    func integers() {
        for byte in UInt8.min...UInt8.max {
            #expect(PrintfText.format("%02x", byte) == String(format: "%02x", byte))
            #expect(PrintfText.format("%%%02X", byte) == String(format: "%%%02X", byte))
        }
        for mode: UInt32 in 0...0o777 {
            #expect(PrintfText.format("%04o", mode) == String(format: "%04o", mode))
        }
    }

    @Test("text longer than the first buffer comes whole")
    func long() {
        #expect(PrintfText.format("%.3f", 1e300) == String(format: "%.3f", 1e300))
        #expect(PrintfText.format("%.3f", 1e300).count > 300)
    }
}
