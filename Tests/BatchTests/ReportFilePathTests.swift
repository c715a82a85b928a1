import Foundation
import Testing

@testable import Batch

/// `ReportFile.parent` is `NSString.deletingLastPathComponent` for the paths `mkdir -p` walks.
@Suite("ReportFile.parent: a path's folder without NSString")
struct ReportFilePathTests {
    @Test(
        "parent is deletingLastPathComponent",
        arguments: ["/a/b", "/a", "/", "a/b", "a/b/", "/a/b//", "a//b", "//a", "/tmp/x/y/z.xml", "./r", "../r"])
    func parent(_ path: String) {
        #expect(ReportFile.parent(path) == (path as NSString).deletingLastPathComponent)
    }

    @Test("a path of one relative component has no folder (NSString traps on it on Linux)")
    func noFolder() {
        #expect(ReportFile.parent("") == "")
        #expect(ReportFile.parent("a") == "")
        #expect(ReportFile.parent("a/") == "")
    }
}
