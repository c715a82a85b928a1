import Foundation
import Testing

@testable import Clients
@testable import WebAPI

/// The helpers that replaced Foundation proper in Clients (issue 43), against Foundation.
///
/// Dates, JSON text, path text and folder checks, each for the same input as Foundation had.
/// Serialized: Foundation's date formatters, used from several tests at once, have crashed in ICU.
@Suite("Clients without Foundation proper: the same answers as Foundation", .serialized)
struct EssentialsEquivalenceTests {
    /// Moments around the edges a date formatter could get wrong: the epoch, leap days, the
    /// ends of years and centuries, fractions, times before 1970 back to the Gregorian calendar's
    /// first day (1582-10-15; before it Foundation counts Julian days, `UTCDates` Gregorian ones).
    static let epochs: [Double] = [
        0, 0.999, 0.9996, 59.9995, 59, 86_399, 86_400, 951_782_399, 951_782_400, 951_868_800, 1_582_934_400.5,
        1_709_164_800,
        1_709_251_199, 1_735_689_599, 1_735_689_600, 1_764_460_800, 4_102_444_799, 4_107_542_400, 32_503_680_000,
        -1, -0.5, -86_400, -86_401, -2_208_988_800, -12_219_292_800,
    ]

    static func formatter(_ pattern: String) -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = pattern
        return formatter
    }

    @Test("UTC days, minutes and timestamps as DateFormatter wrote them", arguments: epochs)
    func writtenDates(epoch: Double) {
        let date = Date(timeIntervalSince1970: epoch)
        #expect(UTCDates.day(epoch) == Self.formatter("yyyy-MM-dd").string(from: date))
        #expect(UTCDates.minute(epoch) == Self.formatter("yyyy-MM-dd HH:mm").string(from: date))
        #expect(UTCDates.timestamp(epoch) == Self.formatter("yyyy-MM-dd'T'HH:mm:ss'Z'").string(from: date))
        #expect(UTCDates.timestamp(epoch) == ISO8601DateFormatter().string(from: date))
    }

    @Test("every day from 1999 to 2031 reads back as DateFormatter read it")
    func readDays() {
        let formatter = Self.formatter("yyyy-MM-dd")
        var mismatches: [String] = []
        var epoch = 915_148_800.0  // 1999-01-01
        while epoch < 1_956_528_000 {  // 2032-01-01
            let text = formatter.string(from: Date(timeIntervalSince1970: epoch))
            if UTCDates.epoch(ofDay: text) != formatter.date(from: text)?.timeIntervalSince1970 {
                mismatches.append(text)
            }
            epoch += 86_400
        }
        #expect(mismatches.isEmpty)
        for bad in ["2026-02-30", "2026-13-01", "2026-1-01", "26-01-01", "2026-01-01T", "", "２０２６-01-01", "2025-02-29"]
        {
            #expect(UTCDates.epoch(ofDay: bad) == nil, "\(bad)")
        }
        #expect(UTCDates.epoch(ofDay: "2024-02-29") == 1_709_164_800)
    }

    @Test(
        "ISO 8601 times read as ISO8601DateFormatter read them (default options, then fractional seconds)",
        arguments: [
            "2024-11-25T01:00:02Z", "2020-01-31T23:59:59Z", "2020-01-31T23:59:59+02:00", "2020-01-31T23:59:59-0530",
            "2024-11-25T01:00:02.5Z", "2024-11-25T01:00:02.123456Z", "2024-11-25T01:00:02.123+01:00",
            "1970-01-01T00:00:00Z", "2024-02-29T12:00:00Z", "2024-11-25 01:00:02Z", "2024-11-25", "not a date", "",
            "2024-11-25T01:00Z", "2024-13-25T01:00:02Z",
        ])
    func readISO8601(text: String) {
        let formatter = ISO8601DateFormatter()
        var expected = formatter.date(from: text)
        if expected == nil {
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            expected = formatter.date(from: text)
        }
        let read = UTCDates.epoch(iso8601: text)
        #expect((read == nil) == (expected == nil), "\(text)")
        if let read, let expected { #expect(abs(read - expected.timeIntervalSince1970) < 0.001, "\(text)") }
    }

    @Test("the first of next month as the Gregorian calendar in UTC said", arguments: epochs.filter { $0 >= 0 })
    func firstOfNextMonth(epoch: Double) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let start = calendar.dateComponents([.year, .month], from: Date(timeIntervalSince1970: epoch))
        let first = calendar.date(from: start).flatMap { calendar.date(byAdding: .month, value: 1, to: $0) }
        #expect(BitlyLimits.firstOfNextMonth(after: epoch) == first?.timeIntervalSince1970)
    }

    /// Documents as servers send them: nesting, every kind of value, escapes, numbers of every form.
    static let documents = [
        #"{"message":"Validation Failed","errors":[{"resource":"Issue","field":"title","code":"missing_field"}]}"#,
        #"[1, -2, 3.5, 1e20, 1E-7, 0.1, 100.0, -0.0, 9223372036854775807, true, false, null, "a/b", "é\u0001\u001f\"\\"]"#,
        #"{"b": {"x": 1, "a": [1, "s", {}], "c": []}, "a": "https://example.com/a?b=c", "": null}"#,
        #"["line\nbreak\ttab\r\b\f", "\u2028\u2029", "😀", "\ud83d\ude00", "<>&'"]"#,
        #"{"n": 12.50, "m": 3.0, "k": 1.7976931348623157e308, "j": 5e-324, "i": 123456789012345}"#,
    ]

    @Test("JSON text as JSONSerialization wrote it, for every option the clients use", arguments: documents)
    func writtenJSON(document: String) throws {
        let foundation = try JSONSerialization.jsonObject(with: Data(document.utf8), options: [.fragmentsAllowed])
        let value = try #require(JSONValue.parse(Array(document.utf8)))
        let optionSets: [(JSONSerialization.WritingOptions, JSONEncoder.OutputFormatting)] = [
            ([.sortedKeys, .withoutEscapingSlashes], [.sortedKeys, .withoutEscapingSlashes]),
            ([.withoutEscapingSlashes, .sortedKeys], [.withoutEscapingSlashes, .sortedKeys]),
            ([.sortedKeys], [.sortedKeys]),
            ([.prettyPrinted, .sortedKeys], [.prettyPrinted, .sortedKeys]),
        ]
        for (writing, formatting) in optionSets {
            let expected = try JSONSerialization.data(
                withJSONObject: foundation, options: writing.union(.fragmentsAllowed))
            #expect(value.encoded(formatting) == expected, "\(document)")
            #expect(JSONValue.encoded(native: value.native, formatting) == expected, "\(document)")
        }
    }

    @Test(
        "documents accepted and refused as JSONSerialization did",
        arguments: [
            "", " ", "{}", "[]", " [ ] ", "[1,]", #"{"a":1,}"#, "01", "-", "-0", "1.", ".5", "1e", "1e+", "1E+2", "+1",
            "[1 2]", "[,]", "{,}", "[1,,]", "[1, ]", #""\x""#, #""\ud83d""#, #""\udc00""#, #""\ud83d\ude00""#,
            "\"tab\there\"", "nul", "true false",
            "[true]x", "\u{FEFF}[1]", "NaN", "Infinity", "1e400", "-1e-400", #"{"a" 1}"#, #"{1: 2}"#, #"{"a":1 "b":2}"#,
            #""\u00e9\u0000""#, #"["\/"]"#, "123456789012345678901234567890", "9223372036854775808", "[[[[[]]]]]",
        ])
    func acceptance(document: String) {
        let expected =
            (try? JSONSerialization.jsonObject(with: Data(document.utf8), options: [.fragmentsAllowed])) != nil
        #expect((JSONValue.parse(Array(document.utf8)) != nil) == expected, "\(document)")
    }

    @Test("invalid UTF-8 in a string refused as JSONSerialization did")
    func invalidText() {
        for bytes: [UInt8] in [
            [0x22, 0xFF, 0x22], [0x22, 0xC3, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0xC3, 0xA9, 0x22],
        ] {
            let expected = (try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])) != nil
            #expect((JSONValue.parse(bytes) != nil) == expected, "\(bytes)")
        }
    }

    @Test("a string literal as GraphQL bodies quote it")
    func quotedString() throws {
        for text in ["plain", "with \"quotes\" and \\", "a/b", "\u{1}\u{1f}\n", "é😀"] {
            let expected = try JSONSerialization.data(withJSONObject: [text], options: [.withoutEscapingSlashes])
            #expect(GitHubGraphQL.jsonString(text) == Array(expected.dropFirst().dropLast()))
        }
    }

    @Test("numbers from a document as NSNumber gave them, booleans apart")
    func numbers() throws {
        let document = #"[0, 1, -7, 2.5, 1e3, 3.0, 1700000000, 1e300, true, false, "5", null]"#
        let foundation = try #require(try JSONSerialization.jsonObject(with: Data(document.utf8)) as? [Any])
        let native = try #require(JSONValue.parse(Array(document.utf8))?.native as? [Any])
        for (old, new) in zip(foundation, native) {
            let number = old as? NSNumber
            let isBool = number.map { String(cString: $0.objCType) == "c" } ?? false
            let expected = isBool || old is String ? nil : number?.doubleValue
            #expect(JSONValue.number(new) == expected, "\(old)")
        }
        #expect(JSONValue.isNull(native[11]))
        #expect(!JSONValue.isNull(native[0]) && !JSONValue.isNull(nil))
        #expect(JSONValue(native: Double.infinity) == nil && JSONValue(native: [Double.nan]) == nil)
    }

    @Test("paths without their last component as NSString cut them")
    func paths() {
        for path in ["/a/b/c", "/a/b/", "/a", "/", "a/b", "a//b", "//a", "/a//b//", "./x", "../", "~/x", "é/ü"] {
            #expect(PathText.deletingLastComponent(path) == (path as NSString).deletingLastPathComponent, "\(path)")
        }
        // Foundation itself traps on these (String._startOfLastPathComponent); Apple documents "".
        #expect(PathText.deletingLastComponent("") == "")
        #expect(PathText.deletingLastComponent("a") == "")
    }

    @Test("folders told apart from files as fileExists(atPath:isDirectory:) did")
    func folders() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("essentials-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        let file = root.appendingPathComponent("file")
        try Data("x".utf8).write(to: file)
        let linkToFolder = root.appendingPathComponent("folder-link")
        try FileManager.default.createSymbolicLink(at: linkToFolder, withDestinationURL: root)
        let dangling = root.appendingPathComponent("dangling")
        try FileManager.default.createSymbolicLink(
            at: dangling, withDestinationURL: root.appendingPathComponent("missing"))
        for url in [root, file, linkToFolder, dangling, root.appendingPathComponent("missing")] {
            var expectedFolder: ObjCBool = false
            let expected = FileManager.default.fileExists(atPath: url.path, isDirectory: &expectedFolder)
            var isFolder = false
            #expect(FileManager.default.fileExists(atPath: url.path, isFolder: &isFolder) == expected, "\(url.path)")
            #expect(!expected || isFolder == expectedFolder.boolValue, "\(url.path)")
        }
    }
}
