import Foundation
import Testing
import WebAPI

/// `SystemErrorText` reads Foundation's errors as `CocoaError` and `POSIXError` values (no
/// `NSError`): the same words for an error thrown by `FoundationEssentials` and for one made
/// by Foundation proper.
@Suite("SystemErrorText: errno's words for Foundation's errors")
struct SystemErrorTextTests {
    @Test("a file error from FoundationEssentials reads as its errno, with its path")
    func essentials() {
        let missing = "/nonexistent-\(UUID().uuidString)/file"
        do {
            _ = try Data(contentsOf: URL(fileURLWithPath: missing))
            Issue.record("read a file that does not exist")
        } catch {
            #expect(SystemErrorText.reason(error) == "No such file or directory")
            #expect(SystemErrorText.describe(error) == "\(missing): No such file or directory")
            #expect(SystemErrorText.isSystem(error))
        }
    }

    @Test("an NSError made by Foundation proper reads the same")
    func nsError() {
        let underlying = NSError(domain: NSPOSIXErrorDomain, code: Int(EACCES))
        let error = NSError(
            domain: NSCocoaErrorDomain, code: 513,
            userInfo: [NSUnderlyingErrorKey: underlying, NSFilePathErrorKey: "/etc/shadow"])
        #expect(SystemErrorText.reason(error) == "Permission denied")
        #expect(SystemErrorText.describe(error) == "/etc/shadow: Permission denied")
        #expect(
            SystemErrorText.reason(NSError(domain: NSPOSIXErrorDomain, code: Int(ENOSPC))) == "No space left on device")
        #expect(SystemErrorText.reason(NSError(domain: NSCocoaErrorDomain, code: 642)) == "Read-only file system")
    }

    @Test("other errors: POSIX's words, Cocoa's codes in words, anything else as it describes itself")
    func others() {
        #expect(SystemErrorText.reason(POSIXError(.EISDIR)) == "Is a directory")
        #expect(
            SystemErrorText.reason(CocoaError(CocoaError.Code(rawValue: 3840)))
                == "the data is not in the expected format")
        #expect(SystemErrorText.reason(CocoaError(.fileReadCorruptFile)) == "the file cannot be read")
        #expect(SystemErrorText.reason(CocoaError(.fileNoSuchFile)) == "No such file or directory")
        struct Own: Error, CustomStringConvertible { var description: String { "own words" } }
        #expect(SystemErrorText.reason(Own()) == "own words")
        #expect(!SystemErrorText.isSystem(Own()))
        #expect(SystemErrorText.reason(NSError(domain: "Elsewhere", code: 7)) == "error 7")
    }
}
