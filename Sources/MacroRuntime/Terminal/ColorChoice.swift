import Platform

/// When apimacro colours what it prints (tables, JSON, errors and warnings): `--color
/// auto|always|never`, else `[ui] color` in config.toml (the variable `APIMACRO_UI_COLOR`), else
/// `NO_COLOR` (no-color.org: set and not empty means never), else `auto`: colour on a terminal
/// whose `TERM` is not `dumb`.
///
/// A user's configuration and a flag win over `NO_COLOR`, as no-color.org asks; `NO_COLOR` and a
/// dumb terminal are folded in when the choice is resolved, so `auto` means "on a terminal".
public enum ColorChoice: String, Sendable, CaseIterable {
    case auto, always, never

    /// The variable `[ui] color` in config.toml stands for.
    static let variable = "APIMACRO_UI_COLOR"

    /// The choice from `--color` (`flag`), else the environment with config.toml beneath it.
    ///
    /// - Throws: `MacroError` naming where a value that is none of auto, always, never came from.
    static func resolve(flag: String?, check: SettingCheck) throws -> ColorChoice {
        if let flag { return try parse(flag, source: "--color") }
        if let found = check.value(variable) {
            let choice = try parse(found.value, source: found.source)
            if choice != .auto { return choice }
        }
        return fallback(check.environment)
    }

    /// `NO_COLOR` or a dumb terminal: never; else auto.
    static func fallback(_ environment: [String: String]) -> ColorChoice {
        if let noColor = environment["NO_COLOR"], !noColor.isEmpty { return .never }
        return environment["TERM"] == "dumb" ? .never : .auto
    }

    /// The choice `text` names.
    static func parse(_ text: String, source: String) throws -> ColorChoice {
        if let choice = ColorChoice(rawValue: text.lowercased()) { return choice }
        let names = allCases.map(\.rawValue)
        throw MacroError(
            "\(source): '\(text)' is not a colour choice; accepted: \(names.joined(separator: ", "))"
                + SettingCheck.didYouMean(text, names))
    }

    /// The choice for printing an error when the settings may be what failed: `--color` or
    /// `--color=` among `arguments`, config.toml when it can be read, the environment.
    public static func forErrors(arguments: [String], environment: [String: String]) -> ColorChoice {
        var flag: String?
        for (index, argument) in arguments.enumerated() {
            if argument == "--" { break }
            if argument.hasPrefix("--color=") { flag = String(argument.dropFirst(8)) }
            if argument == "--color", index + 1 < arguments.count { flag = arguments[index + 1] }
        }
        var merged = environment
        if merged[variable] == nil,
            let file = try? ConfigFile(home: Settings.home(environment: environment)).variables()
        {
            merged[variable] = file[variable]
        }
        let check = SettingCheck(environment: merged, origins: [:])
        return (try? resolve(flag: flag, check: check)) ?? fallback(environment)
    }

    /// Whether what is written to `descriptor` is coloured: always, never, or (auto) when it is a
    /// terminal.
    public func colors(_ descriptor: Int32) -> Bool {
        switch self {
        case .always: true
        case .never: false
        case .auto: isatty(descriptor) == 1
        }
    }

    /// The palette for `descriptor`.
    public func palette(for descriptor: Int32) -> Palette {
        Palette(enabled: colors(descriptor))
    }
}
