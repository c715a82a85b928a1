public import Clients
public import Platform
import PluginHost
import WebAPI

/// `$APIMACRO_HOME/config.toml`: settings a user keeps instead of exporting
/// variables. Each key stands for the environment variable of the same name
/// (SPEC §2), so there is one list of settings, not two:
///
/// ```toml
/// format = "table"            # APIMACRO_FORMAT
/// max_wait = 30               # APIMACRO_MAX_WAIT
/// request_timeout = 10        # APIMACRO_REQUEST_TIMEOUT
/// plugins = ["/opt/plugins"]  # APIMACRO_PLUGINS (joined with ':')
/// max_rate = "10/s"           # APIMACRO_MAX_RATE (per process; across processes with shared state)
/// max_concurrency = 4         # APIMACRO_MAX_CONCURRENCY (likewise)
/// jq_memory = 512             # APIMACRO_JQ_MEMORY (MiB an `api --jq` filter may use)
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
///
/// [ui]
/// color = "never"                              # APIMACRO_UI_COLOR (auto, always, never)
/// ```
///
/// A variable set in the environment wins over the file (flags > env > config.toml > defaults).
/// A key apimacro does not know stops every command (`Settings.load`), as a bad value does.
///
/// The file decides where requests and tokens go (`[github] url`), and may hold secrets: it is
/// read only when it belongs to the user (or root) and no one else may write it, and, when it
/// holds a secret (`holdsSecret`), no one else may read it either (`SecureFile.exposure`, the
/// rule of `credentials.json`; issue 24).
public struct ConfigFile: Sendable {
    /// Where the file is (it need not exist).
    public let path: URL

    public init(home: URL) {
        path = home.appendingPathComponent("config.toml")
    }

    /// One setting of the file: its key as written (`format`, `github.url`), the
    /// variable it stands for, its value as the variable would hold it, and the type it was
    /// written with.
    public struct Entry: Sendable, Equatable {
        public let key: String
        public let variable: String
        public let value: String
        /// What the file holds there (`checkKeys` holds it against what the key takes).
        public let type: ValueType
    }

    /// The types a setting's value may have in the file.
    public enum ValueType: String, Sendable {
        case string = "a string"
        case integer = "an integer"
        case float = "a float"
        case boolean = "a boolean"
        case list = "a list of strings"
    }

    /// The top-level keys apimacro knows, and the keys of the built-in clients' tables.
    ///
    /// Any other table must be named after a plugin found in the plugin folders.
    /// (From `SettingsTable`, which `apimacro help environment` and the man page print.)
    static let knownKeys = SettingsTable.topLevelKeys
    /// What each key takes, by its path (`max_wait`, `shared.timeout`), when it is not a string
    /// (every other key, a client's or a plugin's included, takes a string).
    static let valueTypes: [String: [ValueType]] = [
        "max_wait": [.integer, .float], "request_timeout": [.integer, .float], "max_rate": [.integer, .float, .string],
        "max_concurrency": [.integer], "jq_memory": [.integer], "plugins": [.list],
        "stale_if_error": [.boolean, .string], "no_proxy": [.list],
        "shared.timeout": [.integer, .float],
    ]
    /// The keys every client's and plugin's table takes beside its own: `[NAME.limits]`
    /// (`LocalLimits`, held in each process: `APIMACRO_<NAME>_LIMITS_RATE`, `_CONCURRENCY`).
    static let limitKeys = ["limits.rate", "limits.concurrency"]
    /// Lists are joined with ':' (a path list) unless the variable takes another separator.
    static let listSeparators = ["no_proxy": ","]
    static let knownTables: [String: [String]] = {
        var tables = Dictionary(
            uniqueKeysWithValues: BuiltInClients.descriptors.filter { !$0.configKeys.isEmpty }.map {
                ($0.name, $0.configKeys)
            })
        // `[shared] redis = "redis://…"`: APIMACRO_SHARED_STATE (read through APIMACRO_SHARED_REDIS);
        // `timeout`: APIMACRO_SHARED_STATE_TIMEOUT (through APIMACRO_SHARED_TIMEOUT).
        tables["shared"] = SettingsTable.keys(ofTable: "shared")
        // `[ui] color = "never"`: APIMACRO_UI_COLOR (see `ColorChoice`).
        tables["ui"] = SettingsTable.keys(ofTable: "ui")
        return tables
    }()

    /// The file's settings as environment variables; empty when there is no file.
    ///
    /// Throws `MacroError` naming the file, the line and the key for a file that cannot be used.
    public func variables() throws -> [String: String] {
        Dictionary(try entries().map { ($0.variable, $0.value) }) { _, last in last }
    }

    /// The file's settings in order of key; empty when there is no file.
    ///
    /// Throws `MacroError` for a file another user could change, or one holding a secret that
    /// others could read (with the `chmod` to run), as for one that is not valid.
    public func entries() throws -> [Entry] {
        let file = path.path
        let contents: (bytes: [UInt8], info: stat)
        do {
            // A link is followed (a dotfiles manager may link the file); the file read is checked.
            let read = try SecureFile.load(path, followingLinks: true) {
                SecureFile.exposure($0, path: file, isPrivate: false)
            }
            guard let read else { return [] }
            contents = read
        } catch let error as APIError {
            throw MacroError(error.message)
        }
        guard let text = String(validating: contents.bytes, as: UTF8.self) else {
            throw MacroError("cannot read \(file): it is not UTF-8 text; save it as UTF-8")
        }
        let entries = try entries(text)
        if let secret = entries.first(where: Self.holdsSecret),
            let problem = SecureFile.exposure(contents.info, path: file, isPrivate: true)
        {
            throw MacroError("refusing to read \(file): it holds a secret (\(secret.key)), and \(problem)")
        }
        return entries
    }

    /// Whether a setting is a credential: its variable's name says so (`Settings.isSecretVariable`:
    /// `[github] token`, `[shortener] key`), it is a URL with a user or password (`[shared] redis`,
    /// a proxy), or it is a key of a plugin's table other than the public ones (a plugin names its
    /// credential's variable as it likes).
    static func holdsSecret(_ entry: Entry) -> Bool {
        if Settings.isSecretVariable(entry.variable) { return true }
        if let scheme = entry.value.firstRange(of: "://") {
            let authority = entry.value[scheme.upperBound...].prefix { !"/?#".contains($0) }
            if authority.contains("@") { return true }
        }
        let parts = entry.key.split(separator: ".", maxSplits: 1).map {
            $0.lowercased().replacing("-", with: "_")
        }
        return parts.count == 2 && knownTables[parts[0]] == nil && !publicPluginKeys.contains(parts[1])
    }

    /// Whether a syntax error on line `number` of `text` may quote the value written there
    /// (`format = csv`): only under a key that never holds a secret (not `token`, not a
    /// plugin's key, not a proxy, whose URL may carry a password), and with no `@` on the line.
    static func mayShowValue(onLine number: Int, of text: String) -> Bool {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard number >= 1, number <= lines.count, !lines[number - 1].contains("@"),
            let equals = lines[number - 1].firstIndex(of: "=")
        else { return false }
        let written = lines[number - 1][..<equals].trimmingWhitespace()
        let key = parts(written.split(separator: ".").last.map(String.init) ?? "").joined()
        let publicClientKeys = BuiltInClients.descriptors.flatMap(\.settings).filter {
            !Settings.isSecretVariable($0.variable)
        }.map(\.key)
        let publicKeys =
            knownKeys.filter { !$0.hasSuffix("_proxy") } + ["timeout"] + publicClientKeys + publicPluginKeys
        return publicKeys.contains(key)
    }

    /// The keys of a plugin's table that hold no secret (its URL, an OAuth app's public settings).
    static let publicPluginKeys = ["url", "client_id", "redirect_uri", "authorize_url"]

    /// The settings of the file's `text`, in order of key.
    private func entries(_ text: String) throws -> [Entry] {
        let document: [String: TOMLValue]
        do {
            document = try TOMLValue.parse(text)
        } catch let error as TOMLSyntaxError {
            let shown = Self.mayShowValue(onLine: error.line, of: text) ? error : error.concealingValue
            throw MacroError("\(path.path) is not valid TOML: \(shown)")
        } catch {
            throw MacroError("\(path.path) is not valid TOML: \(error)")
        }
        var entries: [Entry] = []
        for (key, value) in document.sorted(by: { $0.key < $1.key }) {
            if case .table(let table) = value {
                for (innerKey, innerValue) in table.sorted(by: { $0.key < $1.key }) {
                    // `[github.limits] rate = "10/s"`: APIMACRO_GITHUB_LIMITS_RATE (any client or plugin).
                    if innerKey == "limits", case .table(let limits) = innerValue {
                        for (limitKey, limitValue) in limits.sorted(by: { $0.key < $1.key }) {
                            let path = "\(key).limits.\(limitKey)"
                            let (text, type) = try string(limitValue, key: path)
                            entries.append(
                                Entry(
                                    key: path, variable: Self.variableName(key, "limits", limitKey), value: text,
                                    type: type))
                        }
                        continue
                    }
                    let path = "\(key).\(innerKey)"
                    let (text, type) = try string(innerValue, key: path)
                    entries.append(
                        Entry(
                            key: path, variable: Self.variable(table: key, key: innerKey), value: text, type: type))
                }
            } else {
                let (text, type) = try string(value, key: key)
                entries.append(Entry(key: key, variable: Self.variableName(key), value: text, type: type))
            }
        }
        return entries
    }

    /// Throws a one-line `MacroError` for the first key apimacro does not know, with
    /// "did you mean" for a near miss, or whose value is not of the type the key takes (with the
    /// line to write instead); a table other than a built-in client's must be named after a
    /// plugin in `pluginFolders` and hold only the keys that plugin reads (any key, when the
    /// plugin did not load: its own error says why); each folder of `plugins` must exist.
    public func checkKeys(_ entries: [Entry], pluginFolders: [URL]) throws {
        // No file, or nothing in it: nothing to check (and the tables below are not built).
        guard !entries.isEmpty else { return }
        // Manifests are read only when the file has a table that is no built-in client's.
        let needsPlugins = entries.contains { entry in
            let parts = Self.parts(entry.key)
            return parts.count == 2 && Self.knownTables[parts[0]] == nil
        }
        let plugins =
            needsPlugins ? PluginRegistry.load(folders: pluginFolders, reservedNames: BuiltInClients.names) : .empty
        let pluginTables = Dictionary(plugins.plugins.map { ($0.name, $0.descriptor.configKeys) }) { first, _ in first }
        let unchecked = Set(plugins.failures.map(\.name))
        let tables = Self.knownTables.keys.sorted() + pluginTables.keys.sorted()
        for entry in entries {
            let parts = Self.parts(entry.key)
            if parts.count == 1 {
                guard Self.knownKeys.contains(parts[0]) else {
                    let hint = SettingCheck.didYouMean(parts[0], Self.knownKeys + tables)
                    throw MacroError(
                        "\(path.path): unknown key '\(entry.key)'\(hint) (known keys: \(Self.knownKeys.joined(separator: ", ")); "
                            + "tables: \(tables.map { "[\($0)]" }.joined(separator: ", ")))")
                }
            } else if let keys = (Self.knownTables[parts[0]] ?? pluginTables[parts[0]]).map({ $0 + Self.limitKeys }) {
                guard keys.contains(parts[1]) else {
                    throw MacroError(
                        "\(path.path): unknown key '\(parts[1])' in [\(parts[0])]\(SettingCheck.didYouMean(parts[1], keys)) "
                            + "(known keys: \(keys.joined(separator: ", ")))")
                }
            } else if !unchecked.contains(parts[0]) {
                throw MacroError(
                    "\(path.path): unknown table [\(parts[0])]: no client or plugin of that name\(SettingCheck.didYouMean(parts[0], tables)) "
                        + "(tables: \(tables.map { "[\($0)]" }.joined(separator: ", ")))")
            }
            try checkType(entry, parts: parts)
        }
    }

    /// Throws unless `entry` holds the type its key takes (`valueTypes`, else a string), and,
    /// for `plugins`, folders that exist.
    private func checkType(_ entry: Entry, parts: [String]) throws {
        let path = parts.joined(separator: ".")
        let types =
            Self.valueTypes[path]
            ?? (path.hasSuffix(".limits.rate")
                ? [.string, .integer, .float] : path.hasSuffix(".limits.concurrency") ? [.integer] : [.string])
        guard types.contains(entry.type) else {
            let name = parts.count == 2 ? "[\(parts[0])] \(parts[1])" : parts[0]
            let key = parts.last ?? path
            let example: String
            switch types.first {
            case .list?: example = "\(key) = [\"\(entry.value)\"]"
            case .integer?, .float?:
                example = Double(entry.value) == nil ? "\(key) = 30" : "\(key) = \(entry.value)"
            default: example = "\(key) = \"\(entry.value)\""
            }
            let wanted = types.contains(.float) ? "a number" : types[0].rawValue
            throw MacroError(
                "\(self.path.path): \(name) is \(entry.type.rawValue); it takes \(wanted), such as: \(example)")
        }
        if path == "plugins" {
            for folder in entry.value.split(separator: ":").map(String.init) {
                var isDirectory = false
                guard FileManager.default.fileExists(atPath: folder, isFolder: &isDirectory), isDirectory
                else {
                    throw MacroError(
                        "\(self.path.path): plugins: \(folder) is not a folder; list folders that hold plugin "
                            + "folders (each with a plugin.toml), or remove it")
                }
            }
        }
    }

    /// A key's path in lowercase with `_` for `-`: `["github", "url"]`, `["format"]`.
    private static func parts(_ key: String) -> [String] {
        key.split(separator: ".", maxSplits: 1).map { $0.lowercased().replacing("-", with: "_") }
    }

    /// A key as a user writes it in the file: `[github] token` for `github.token`, `format` for `format`.
    static func spelled(_ key: String) -> String {
        let parts = key.split(separator: ".", maxSplits: 1)
        return parts.count == 2 ? "[\(parts[0])] \(parts[1])" : key
    }

    /// The variable `[table] key` stands for: the one a built-in client declares for that key
    /// (`[shortener] backend` is `APIMACRO_SHORTENER`), else `variableName(table, key)`.
    static func variable(table: String, key: String) -> String {
        func normal(_ text: String) -> String { text.lowercased().replacing("-", with: "_") }
        let declared = BuiltInClients.named(normal(table))?.descriptor.settings.first { $0.key == normal(key) }
        return declared?.variable ?? variableName(table, key)
    }

    /// `APIMACRO_` and the key path in capitals: `[github] url` is `APIMACRO_GITHUB_URL`.
    static func variableName(_ parts: String...) -> String {
        "APIMACRO_" + parts.map { $0.uppercased().replacing("-", with: "_") }.joined(separator: "_")
    }

    /// The value as the variable would hold it, and its type.
    private func string(_ value: TOMLValue, key: String) throws -> (String, ValueType) {
        switch value {
        case .string(let string): return (string, .string)
        case .integer(let integer): return (String(integer), .integer)
        case .double(let double): return (String(double), .float)
        case .bool(let bool): return (bool ? "1" : "0", .boolean)
        case .array(let items):
            let text = try items.map { item -> String in
                guard case .string(let string) = item else {
                    throw MacroError("\(path.path): '\(key)' must be a list of strings, found \(item.typeName) in it")
                }
                return string
            }.joined(separator: Self.listSeparators[key.lowercased().replacing("-", with: "_")] ?? ":")
            return (text, .list)
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
        _ process: [String: String] = ProcessEnvironment.variables
    ) throws -> [String: String] {
        let file = ConfigFile(home: home(environment: process))
        return try file.variables().merging(process) { _, environment in environment }
    }
}

extension Settings {
    /// Where `source` takes a credential from, as `auth status` and `plugins list` say it:
    /// each variable it reads as `env NAME`, or, when `config.toml` set it, as its key there
    /// (`[github] token in /home/me/.config/apimacro/config.toml`).
    public func describe(_ source: CredentialSource) -> String {
        guard source.variables.contains(where: { configFileKeys[$0] != nil }) else { return source.name }
        let file = ConfigFile(home: home).path.path
        return source.variables.map { variable in
            configFileKeys[variable].map { "\(ConfigFile.spelled($0)) in \(file)" } ?? "env \(variable)"
        }.joined(separator: ", ")
    }
}
