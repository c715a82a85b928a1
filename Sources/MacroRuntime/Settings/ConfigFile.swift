import Foundation
import PluginHost

/// `$APIMACRO_HOME/config.toml`: settings a user keeps instead of exporting
/// variables. Each key stands for the environment variable of the same name
/// (SPEC §2), so there is one list of settings, not two:
///
/// ```toml
/// format = "table"            # APIMACRO_FORMAT
/// max_wait = 30               # APIMACRO_MAX_WAIT
/// request_timeout = 10        # APIMACRO_REQUEST_TIMEOUT
/// plugins = ["/opt/plugins"]  # APIMACRO_PLUGINS (joined with ':')
/// max_rate = 10               # APIMACRO_MAX_RATE (with shared state)
/// max_concurrency = 4         # APIMACRO_MAX_CONCURRENCY (with shared state)
///
/// [shared]
/// redis = "redis://:password@redis.internal:6379/0"   # APIMACRO_SHARED_STATE
/// timeout = 2                                          # APIMACRO_SHARED_STATE_TIMEOUT
/// https_proxy = "http://proxy.example.com:3128"   # APIMACRO_HTTPS_PROXY (also http_proxy)
/// no_proxy = ["localhost", ".corp.example.com"]  # APIMACRO_NO_PROXY (joined with ',')
/// ca_bundle = "/etc/ssl/corp-ca.pem"             # APIMACRO_CA_BUNDLE
///
/// [github]
/// url = "https://github.example.com/api/v3"   # APIMACRO_GITHUB_URL
/// ```
///
/// A variable set in the environment wins over the file (flags > env > config.toml > defaults).
/// A key apimacro does not know stops every command (`Settings.load`), as a bad value does.
public struct ConfigFile: Sendable {
    /// Where the file is (it need not exist).
    public let path: URL

    public init(home: URL) {
        path = home.appendingPathComponent("config.toml")
    }

    /// One setting of the file: its key as written (`format`, `github.url`), the
    /// variable it stands for and its value as the variable would hold it.
    public struct Entry: Sendable, Equatable {
        public let key: String
        public let variable: String
        public let value: String
    }

    /// The top-level keys apimacro knows, and the keys of the built-in clients' tables.
    ///
    /// Any other table must be named after a plugin found in the plugin folders.
    static let knownKeys = [
        "format", "max_wait", "request_timeout", "plugins", "max_rate", "max_concurrency", "https_proxy", "http_proxy",
        "no_proxy", "ca_bundle",
    ]
    /// Lists are joined with ':' (a path list) unless the variable takes another separator.
    static let listSeparators = ["no_proxy": ","]
    static var knownTables: [String: [String]] {
        var tables = Dictionary(
            uniqueKeysWithValues: ClientRegistry.all.filter { !$0.configKeys.isEmpty }.map { ($0.name, $0.configKeys) })
        // `[shared] redis = "redis://…"`: APIMACRO_SHARED_STATE (read through APIMACRO_SHARED_REDIS);
        // `timeout`: APIMACRO_SHARED_STATE_TIMEOUT (through APIMACRO_SHARED_TIMEOUT).
        tables["shared"] = ["redis", "timeout"]
        return tables
    }

    /// The file's settings as environment variables; empty when there is no file.
    ///
    /// Throws `MacroError` naming the file, the line and the key for a file that cannot be used.
    public func variables() throws -> [String: String] {
        Dictionary(try entries().map { ($0.variable, $0.value) }) { _, last in last }
    }

    /// The file's settings in order of key; empty when there is no file.
    public func entries() throws -> [Entry] {
        guard FileManager.default.fileExists(atPath: path.path) else { return [] }
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
        var entries: [Entry] = []
        for (key, value) in document.sorted(by: { $0.key < $1.key }) {
            if case .table(let table) = value {
                for (innerKey, innerValue) in table.sorted(by: { $0.key < $1.key }) {
                    entries.append(
                        Entry(
                            key: "\(key).\(innerKey)", variable: Self.variableName(key, innerKey),
                            value: try string(innerValue, key: "\(key).\(innerKey)")))
                }
            } else {
                entries.append(Entry(key: key, variable: Self.variableName(key), value: try string(value, key: key)))
            }
        }
        return entries
    }

    /// Throws a one-line `MacroError` for the first key apimacro does not know, with
    /// "did you mean" for a near miss; a table other than a built-in client's must be
    /// named after a plugin in `pluginFolders`.
    public func checkKeys(_ entries: [Entry], pluginFolders: [URL]) throws {
        let plugins = Self.pluginNames(in: pluginFolders)
        for entry in entries {
            let parts = entry.key.split(separator: ".", maxSplits: 1).map {
                $0.lowercased().replacingOccurrences(of: "-", with: "_")
            }
            if parts.count == 1 {
                guard Self.knownKeys.contains(parts[0]) else {
                    let tables = Self.knownTables.keys.sorted() + plugins
                    let hint = SettingCheck.didYouMean(parts[0], Self.knownKeys + tables)
                    throw MacroError(
                        "\(path.path): unknown key '\(entry.key)'\(hint) (known keys: \(Self.knownKeys.joined(separator: ", ")); "
                            + "tables: \(tables.map { "[\($0)]" }.joined(separator: ", ")))")
                }
                continue
            }
            if let keys = Self.knownTables[parts[0]] {
                guard keys.contains(parts[1]) else {
                    throw MacroError(
                        "\(path.path): unknown key '\(parts[1])' in [\(parts[0])]\(SettingCheck.didYouMean(parts[1], keys)) "
                            + "(known keys: \(keys.joined(separator: ", ")))")
                }
                continue
            }
            guard plugins.contains(parts[0]) else {
                let tables = Self.knownTables.keys.sorted() + plugins
                throw MacroError(
                    "\(path.path): unknown table [\(parts[0])]: no client or plugin of that name\(SettingCheck.didYouMean(parts[0], tables)) "
                        + "(tables: \(tables.map { "[\($0)]" }.joined(separator: ", ")))")
            }
        }
    }

    /// The names of the plugin folders (those holding a `plugin.toml`) in `folders`.
    static func pluginNames(in folders: [URL]) -> [String] {
        let fileManager = FileManager.default
        let names = folders.flatMap { folder in
            ((try? fileManager.contentsOfDirectory(atPath: folder.path)) ?? []).filter {
                fileManager.fileExists(
                    atPath: folder.appendingPathComponent($0).appendingPathComponent("plugin.toml").path)
            }
        }
        return Array(Set(names)).sorted()
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
            }.joined(separator: Self.listSeparators[key.lowercased().replacingOccurrences(of: "-", with: "_")] ?? ":")
        case .table, .other:
            throw MacroError(
                "\(path.path): '\(key)' is \(value.typeName); write a string, number, boolean or list of strings (tables nest one level: [github] url = \"...\")"
            )
        }
    }
}

extension Settings {
    /// The process environment with `config.toml` beneath it: a variable set in the
    /// environment wins over the file.
    ///
    /// This is what the CLI hands to `Settings`.
    public static func environment(
        _ process: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> [String: String] {
        let file = ConfigFile(home: home(environment: process))
        return try file.variables().merging(process) { _, environment in environment }
    }
}
