import Foundation

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// A structural check equivalent to validating against `junit-10.xsd`, the schema
/// of Jenkins' xUnit plugin (MIT licence, © 2014 Gregory Boissinot;
/// github.com/jenkinsci/xunit-plugin, src/main/resources/org/jenkinsci/plugins/xunit/types/model/xsd/junit-10.xsd),
/// which pytest's xunit2 output follows.
///
/// Each rule below restates one element of that schema: its required and allowed attributes, the elements it may
/// hold, and whether it may hold text. The `time` attributes of `testsuites` and `testsuite` must match the
/// schema's `SUREFIRE_TIME` pattern.
final class JUnitSchemaCheck: NSObject, XMLParserDelegate {
    struct Rule {
        var required: Set<String> = []
        var optional: Set<String> = []
        var children: Set<String> = []
        var text = false
    }

    static let messageType = Rule(optional: ["type", "message"], text: true)
    static let rules: [String: Rule] = [
        "testsuites": Rule(optional: ["name", "time", "tests", "failures", "errors"], children: ["testsuite"]),
        "testsuite": Rule(
            required: ["name", "tests", "failures", "errors"],
            optional: ["group", "time", "skipped", "timestamp", "hostname", "id", "package", "file", "log", "url"],
            children: ["testsuite", "properties", "testcase", "system-out", "system-err"]),
        "properties": Rule(children: ["property"]),
        "property": Rule(required: ["name", "value"]),
        "testcase": Rule(
            required: ["name"], optional: ["time", "classname", "group"],
            children: [
                "skipped", "error", "failure", "rerunFailure", "rerunError", "flakyFailure", "flakyError", "system-out",
                "system-err",
            ]),
        "failure": messageType, "error": messageType, "skipped": messageType,
        "system-out": Rule(text: true), "system-err": Rule(text: true),
    ]

    /// `SUREFIRE_TIME`: `(([0-9]{0,3},)*[0-9]{3}|[0-9]{0,3})*(\.[0-9]*)?`.
    static var time: Regex<(Substring, Substring?, Substring?, Substring?)> {
        #/(([0-9]{0,3},)*[0-9]{3}|[0-9]{0,3})*(\.[0-9]*)?/#
    }

    private(set) var problems: [String] = []
    private var stack: [String] = []

    /// What in `data` the schema does not allow (empty: it validates).
    static func problems(in data: Data) -> [String] {
        let check = JUnitSchemaCheck()
        let parser = XMLParser(data: data)
        parser.delegate = check
        if !parser.parse() {
            check.problems.append("not well-formed XML: \(parser.parserError.map { "\($0)" } ?? "?")")
        }
        return check.problems
    }

    func parser(
        _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String]
    ) {
        if let parent = stack.last {
            if Self.rules[parent]?.children.contains(name) != true {
                problems.append("<\(name)> is not allowed in <\(parent)>")
            }
        } else if name != "testsuites" && name != "testsuite" {
            problems.append("the root is <\(name)>, not <testsuites> or <testsuite>")
        }
        stack.append(name)
        guard let rule = Self.rules[name] else {
            problems.append("<\(name)> is not in the schema")
            return
        }
        for missing in rule.required.subtracting(attributes.keys) { problems.append("<\(name)> lacks \(missing)=") }
        for extra in Set(attributes.keys).subtracting(rule.required.union(rule.optional)) {
            problems.append("<\(name)> may not have \(extra)=")
        }
        if ["testsuites", "testsuite"].contains(name), let time = attributes["time"],
            (try? Self.time.wholeMatch(in: time)) == nil
        {
            problems.append("<\(name)> time=\"\(time)\" is not a SUREFIRE_TIME")
        }
    }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        stack.removeLast()
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        guard let current = stack.last, Self.rules[current]?.text != true else { return }
        if !string.allSatisfy(\.isWhitespace) { problems.append("text in <\(current)>, which holds none") }
    }
}
