import Clients
import Foundation
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
            uniqueKeysWithValues: ClientRegistry.all.map(\.descriptor).filter { !$0.configKeys.isEmpty }.map {
                ($0.name, $0.configKeys)
            })
        // `[shared] redis = "redis://…"`: APIMACRO_SHARED_STATE (read through APIMACRO_SHARED_REDIS);
        // `timeout`: APIMACRO_SHARED_STATE_TIMEOUT (through APIMACRO_SHARED_TIMEOUT).
        tables["shared"] = ["redis", "timeout"]
        // `[ui] color = "never"`: APIMACRO_UI_COLOR (see `ColorChoice`).
        tables["ui"] = ["color"]
        return tables
    }

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
        if let scheme = entry.value.range(of: "://") {
            let authority = entry.value[scheme.upperBound...].prefix { !"/?#".contains($0) }
            if authority.contains("@") { return true }
        }
        let parts = entry.key.split(separator: ".", maxSplits: 1).map {
            $0.lowercased().replacingOccurrences(of: "-", with: "_")
        }
        return parts.count == 2 && knownTables[parts[0]] == nil && !publicPluginKeys.contains(parts[1])
    }

    /// The keys of a plugin's table that hold no secret (its URL, an OAuth app's public settings).
    static let publicPluginKeys = ["url", "client_id", "redirect_uri", "authorize_url"]

    /// The settings of the file's `text`, in order of key.
    private func entries(_ text: String) throws -> [Entry] {
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
