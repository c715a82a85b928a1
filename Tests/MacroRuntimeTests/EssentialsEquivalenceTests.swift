import Clients
import Foundation
import Testing
import WebAPI

@testable import MacroRuntime

/// The helpers that replaced Foundation proper in MacroRuntime (issue 43), against what
/// Foundation gave for the same input.
@Suite("MacroRuntime without Foundation proper: the same answers as Foundation")
struct MacroRuntimeEssentialsTests {
    @Test("the environment read from environ is ProcessInfo's, variable for variable")
    func environmentVariables() {
        let ours = ProcessEnvironment.variables
        let theirs = ProcessInfo.processInfo.environment
        #expect(!ours.isEmpty)
        #expect(Set(ours.keys) == Set(theirs.keys))
        for (name, value) in theirs where ours[name] != value {
            Issue.record("\(name): \(ours[name].debugDescription) against \(value.debugDescription)")
        }
    }

    @Test("columns cut or filled as padding(toLength:withPad:startingAt:) did")
    func padding() {
        for text in ["", "abc", "plugin-name", "é", "e\u{301}", "😀x", "x😀", "日本語", "a\u{1}b"] {
            for length in 0...12 {
                #expect(
                    text.padded(toLength: length) == text.padding(toLength: length, withPad: " ", startingAt: 0),
                    "\(text) \(length)")
            }
        }
    }

    @Test("secrets percent-encoded as addingPercentEncoding(withAllowedCharacters: .alphanumerics) did")
    func percentForms() {
        // This toolchain's Foundation keeps ASCII letters and digits only: URLBytes.alphanumeric.
        let secrets = [
            "plain", "p@ss:w/rd?&=", "with space", "é-ü_ß", "日本", "٣٤", "Ⅻ", "x\u{301}", "😀", "%41", "a+b",
            "\u{7f}\u{1}",
            "ǅ", "ʰ", "\u{20DD}", "½", "²",
        ]
        for secret in secrets {
            #expect(
                secret.percentEncoded(allowing: URLBytes.alphanumeric)
                    == secret.addingPercentEncoding(withAllowedCharacters: .alphanumerics),
                "\(secret)")
        }
    }

    @Test("a quote a combining mark follows is still replaced in a shell word")
    func shellQuotes() {
        #expect(ShellWord.singleQuoted("it's") == #"'it'\''s'"#)
        #expect(ShellWord.singleQuoted("a'\u{301}; rm x") == "'a'\\''\u{301}; rm x'")
    }

    @Test("cache times in local time as ISO8601DateFormatter wrote them with the machine's time zone")
    func localTimes() {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate, .withTime, .withColonSeparatorInTime, .withSpaceBetweenDateAndTime]
        formatter.timeZone = .current
        for epoch in [0, 1.5, 951_782_400, 1_764_460_800.999, 1_711_846_800, 1_729_990_800, 4_102_444_799] as [Double] {
            #expect(LocalTime.text(epoch) == formatter.string(from: Date(timeIntervalSince1970: epoch)), "\(epoch)")
        }
    }

    @Test("--template values as they were shown from JSONSerialization's objects")
    func templateValues() throws {
        let document =
            #"[0, -7, 2.5, 1e3, 3.0, 0.1, 1e20, 1e-7, -0.0, true, false, null, "text", "a/b", [1, "x/y"], {"b": 1, "a": [true]}]"#
        let foundation = try #require(try JSONSerialization.jsonObject(with: Data(document.utf8)) as? [Any])
        let native = try #require(JSONValue.parse(Array(document.utf8))?.native as? [Any])
        for (old, new) in zip(foundation, native) {
            let expected: String
            switch old {
            case is NSNull: expected = ""
            case let text as String: expected = text
            case let number as NSNumber:
                expected =
                    String(cString: number.objCType) == "c" ? (number.boolValue ? "true" : "false") : number.stringValue
            default:
                expected = String(
                    decoding: try JSONSerialization.data(withJSONObject: old, options: [.sortedKeys]), as: UTF8.self)
            }
            #expect(ApiTemplate.text(new) == expected, "\(old)")
        }
    }
}
