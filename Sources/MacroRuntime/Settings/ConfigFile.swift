import Foundation
import PluginHost

/// `$APIMACRO_HOME/config.toml`: settings a user keeps instead of exporting
/// variables. Each key stands for the environment variable of the same name
/// (SPEC §2), so there is one list of settings, not two:
///
/// ```toml
/// format = "table"            # APIMACRO_FORMAT
/// max_wait = 30               # APIMACRO_MAX_WAIT
/// plugins = ["/opt/plugins"]  # APIMACRO_PLUGINS (joined with ':')
///
/// [github]
/// url = "https://github.example.com/api/v3"   # APIMACRO_GITHUB_URL
/// ```
///
/// A variable set in the environment wins over the file (flags > env > config.toml > defaults).
public struct ConfigFile: Sendable {
    /// Where the file is (it need not exist).
    public let path: URL

    public init(home: URL) {
        path = home.appendingPathComponent("config.toml")
    }

    /// The file's settings as environment variables; empty when there is no file.
    /// Throws `MacroError` naming the file, the line and the key for a file that cannot be used.
    public func variables() throws -> [String: String] {
        guard FileManager.default.fileExists(atPath: path.path) else { return [:] }
        let text: String
        do {
            text = try String(contentsOf: path, encoding: .utf8)
        } catch {
            throw MacroError("cannot read \(path.path): \(error.localizedDescription)")
        }
        let document: [String: TOMLValue]
        do {
            document = try TOMLValue.parse(text)
        } catch {
            throw MacroError("\(path.path) is not valid TOML: \(error)")
        }
        var variables: [String: String] = [:]
        for (key, value) in document {
            if case .table(let table) = value {
                for (innerKey, innerValue) in table {
                    variables[Self.variableName(key, innerKey)] = try string(innerValue, key: "\(key).\(innerKey)")
                }
            } else {
                variables[Self.variableName(key)] = try string(value, key: key)
            }
        }
        return variables
    }

    /// `APIMACRO_` and the key path in capitals: `[github] url` is `APIMACRO_GITHUB_URL`.
    static func variableName(_ parts: String...) -> String {
        "APIMACRO_" + parts.map { $0.uppercased().replacingOccurrences(of: "-", with: "_") }.joined(separator: "_")
    }

    private func string(_ value: TOMLValue, key: String) throws -> String {
        switch value {
        case .string(let string): return string
        case .integer(let integer): return String(integer)
        case .double(let double): return String(double)
        case .bool(let bool): return bool ? "1" : "0"
        case .array(let items):
            return try items.map { item -> String in
                guard case .string(let string) = item else {
                    throw MacroError("\(path.path): '\(key)' must be a list of strings, found \(item.typeName) in it")
                }
                return string
            }.joined(separator: ":")
        case .table, .other:
            throw MacroError(
                "\(path.path): '\(key)' is \(value.typeName); write a string, number, boolean or list of strings (tables nest one level: [github] url = \"...\")"
            )
        }
    }
}

extension Settings {
    /// The process environment with `config.toml` beneath it: a variable set in the
    /// environment wins over the file. This is what the CLI hands to `Settings`.
    public static func environment(
        _ process: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> [String: String] {
        let file = ConfigFile(home: home(environment: process))
        return try file.variables().merging(process) { _, environment in environment }
    }
}
