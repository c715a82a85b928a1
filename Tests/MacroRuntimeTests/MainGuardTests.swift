import Foundation
import Testing

@testable import MacroRuntime

/// `MainGuard`: the byte scan that replaced the regular expression
/// `__name__\s*==\s*['"]__main__['"]` (issue 43), row by row.
@Suite("the __name__ == \"__main__\" guard, found without a regular expression")
struct MainGuardTests {
    @Test(
        "each spelling the pattern matched is found; near misses are not",
        arguments: [
            ("if __name__ == \"__main__\":\n    main()", true),
            ("if __name__=='__main__':", true),
            ("if __name__ \t==\n  '__main__\":", true),
            ("x = 1\nif __name__ == '__main__':", true),
            ("if __name == '__main__':", false),
            ("if __name__ = '__main__':", false),
            ("if __name__ == __main__:", false),
            ("if __name__ == '__main_':", false),
            ("if __name__ == '__main__", false),
            ("if __name__ != '__main__':", false),
            ("__name__ == '__main__'", true),
            ("__name__ ==", false),
            ("", false),
            ("__name____name__ == '__main__'", true),
            ("if __name__ == 'main':\nif __name__ == \"__main__\":", true),
        ])
    func scan(_ source: String, _ expected: Bool) {
        #expect(MainGuard.present(in: Array(source.utf8)) == expected, "\(source.debugDescription)")
        // The regular expression the scan replaced agrees on every row.
        let regex = source.range(of: #"__name__\s*==\s*['"]__main__['"]"#, options: .regularExpression) != nil
        #expect(regex == expected, "\(source.debugDescription)")
    }
}
