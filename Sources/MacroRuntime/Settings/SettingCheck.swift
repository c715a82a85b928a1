import Clients
import Platform
import WebAPI

/// Checks the value of one setting and says, in one line, where a bad value
/// came from (the flag, the variable, or the `config.toml` key), what was
/// wrong and what is accepted — with "did you mean" for a near miss.
struct SettingCheck {
    let environment: [String: String]
    /// Variable → where it came from when not from the environment (`/path/config.toml: format`).
    let origins: [String: String]

    /// The value of `variable` and where it came from; nil when unset or empty.
    func value(_ variable: String) -> (value: String, source: String)? {
        guard let value = environment[variable], !value.isEmpty else { return nil }
        return (value, origins[variable] ?? variable)
    }

    /// A number of seconds up to `Seconds.longest` (`zeroAllowed`: 0 is accepted), or nil when unset.
    func seconds(_ variable: String, zeroAllowed: Bool) throws -> Double? {
        guard let found = value(variable) else { return nil }
        let number = Double(found.value.trimmingWhitespace())
        try Self.seconds(number, zeroAllowed: zeroAllowed, text: "'\(found.value)'", source: found.source)
        return number
    }

    /// `APIMACRO_MAX_RATE`: requests per second, at least one in `Seconds.longest` (the pace
    /// between two requests is a wait like any other), or nil when unset.
    func rate(_ variable: String) throws -> Double? {
        guard let found = value(variable) else { return nil }
        guard let number = RatePace.parse(found.value), number.isFinite, number >= 1 / Seconds.longest else {
            throw MacroError(
                "\(found.source): '\(found.value)' is not a number of requests per second; accepted: a number of "
                    + "at least 0.000000001 (one request in \(SecondsText.format(Seconds.longest)) s), such as 10 or 0.5, "
                    + "or a rate such as 10/s, 600/min or 5000/h")
        }
        return number
    }

    /// On or off (`on`/`off`, `true`/`false`, `1`/`0`, `yes`/`no`; a config.toml boolean is `1`
    /// or `0`), or nil when unset.
    func onOff(_ variable: String) throws -> Bool? {
        guard let found = value(variable) else { return nil }
        switch found.value.trimmingWhitespace().lowercased() {
        case "on", "true", "1", "yes": return true
        case "off", "false", "0", "no": return false
        default:
            throw MacroError("\(found.source): '\(found.value)' is not on or off; accepted: on, off, true or false")
        }
    }

    /// A whole number of 1 or more, or nil when unset.
    func count(_ variable: String, atLeast least: Int = 1, unit: String? = nil) throws -> Int? {
        guard let found = value(variable) else { return nil }
        guard let number = Int(found.value.trimmingWhitespace()), number >= least else {
            let what = unit.map { "a number of \($0)" } ?? "a count"
            throw MacroError(
                "\(found.source): '\(found.value)' is not \(what); accepted: a whole number of \(least) or more "
                    + "(such as \(max(least, 4)))")
        }
        return number
    }

    /// Every setting a built-in client declares holds what it accepts (a URL, GitHub's API
    /// version a date: `ClientSetting.problem`), and every other `APIMACRO_*_URL` (a plugin's)
    /// an http(s) URL; the first bad one, in the order of the variables' names, is the error.
    func clientVariables() throws {
        var checks: [String: @Sendable (String) -> String?] = [:]
        for variable in environment.keys
        where variable.hasPrefix("APIMACRO_") && variable.hasSuffix("_URL") && variable != "APIMACRO_DATABASE_URL" {
            checks[variable] = ClientSetting.urlProblem
        }
        for setting in BuiltInClients.descriptors.flatMap(\.settings) {
            if let problem = setting.problem { checks[setting.variable] = problem }
        }
        for (variable, problem) in checks.sorted(by: { $0.key < $1.key }) {
            guard let found = value(variable), let message = problem(found.value) else { continue }
            throw MacroError("\(found.source): \(message)")
        }
    }

    /// A flag's or variable's output format.
    static func format(_ text: String, source: String) throws -> OutputFormat {
        if let format = OutputFormat(rawValue: text) { return format }
        let names = OutputFormat.allCases.map(\.rawValue)
        throw MacroError(
            "\(source): '\(text)' is not an output format; accepted: \(names.joined(separator: ", "))\(Self.didYouMean(text, names))"
        )
    }

    /// A number of seconds above 0 given as a flag.
    static func positive(_ number: Double, source: String) throws {
        // Echoed as typed: -1, not -1.0.
        let text = number.rounded() == number && abs(number) < 1e15 ? String(Int(number)) : "\(number)"
        try seconds(number, zeroAllowed: false, text: text, source: source)
    }

    /// Throws unless `number` is a number of seconds from 0 (or just above, unless `zeroAllowed`)
    /// to `Seconds.longest`: a larger one would trap where it becomes whole milliseconds (issue 24).
    private static func seconds(_ number: Double?, zeroAllowed: Bool, text: String, source: String) throws {
        guard let number, Seconds.check(number) == nil, zeroAllowed || number > 0 else {
            throw MacroError(
                "\(source): \(text) is not a number of seconds; accepted: a number "
                    + "\(zeroAllowed ? "of 0 or more" : "above 0") and at most \(SecondsText.format(Seconds.longest)) "
                    + "(about 31 years), such as 30 or 2.5")
        }
    }

    /// `"; did you mean 'X'?"` for a near miss among `known`, else "".
    static func didYouMean(_ word: String, _ known: [String]) -> String {
        NearMiss.suggestion(for: word, among: known).map { "; did you mean '\($0)'?" } ?? ""
    }
}
