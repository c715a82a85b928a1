import Clients
import Platform

/// Every setting apimacro reads from the environment, with its `config.toml` key, its default
/// and what it sets: the settings of apimacro itself (`global`, whose keys `ConfigFile` knows
/// from here) and each built-in client's (its descriptor's `ClientSetting`s).
///
/// `apimacro help environment` prints it, and the man page's ENVIRONMENT section is made from
/// it (`ManualSections`), so neither can drift from what the settings code reads.
public enum SettingsTable {
    /// One setting: its variable, its `config.toml` key (`max_wait`, `shared.redis`,
    /// `github.url`; nil when the file has none), its default and what it sets.
    public struct Entry: Sendable, Equatable {
        public let variable: String
        public let key: String?
        public let defaultText: String?
        public let summary: String

        /// A setting whose variable and key are given apart (`APIMACRO_SHARED_STATE` is
        /// `shared.redis`), or whose key is nil (the file has none).
        public init(variable: String, key: String?, defaultText: String?, summary: String) {
            self.variable = variable
            self.key = key
            self.defaultText = defaultText
            self.summary = summary
        }

        /// The setting `key` of `config.toml`, whose variable is `APIMACRO_` and the key in
        /// capitals, a table's dot an underscore (`ui.color` is `APIMACRO_UI_COLOR`).
        init(key: String, defaultText: String?, summary: String) {
            self.init(
                variable: "APIMACRO_" + String(key.uppercased().map { $0 == "." ? "_" : $0 }), key: key,
                defaultText: defaultText, summary: summary)
        }

        /// A setting `config.toml` has no key for.
        init(variable: String, defaultText: String?, summary: String) {
            self.init(variable: variable, key: nil, defaultText: defaultText, summary: summary)
        }

        /// The key as a user writes it in `config.toml`: `max_wait`, `[github] url`.
        public var keyText: String? {
            guard let key else { return nil }
            let parts = key.split(separator: ".", maxSplits: 1)
            return parts.count == 2 ? "[\(parts[0])] \(parts[1])" : key
        }
    }

    /// apimacro's own settings, in the order `config.toml`'s top-level keys are listed.
    public static let global: [Entry] = [
        Entry(
            key: "format", defaultText: "table on a terminal, else json",
            summary: "the output format: table, json, csv or ndjson (--format)"),
        Entry(
            key: "max_wait", defaultText: "60",
            summary: "the longest rate-limit wait, seconds"),
        Entry(
            key: "request_timeout", defaultText: "30",
            summary: "each request's timeout, seconds (--request-timeout)"),
        Entry(
            key: "stale_if_error", defaultText: "on",
            summary: "serve a cached copy, with a warning, when the network fails (off: --no-stale)"),
        Entry(
            key: "plugins", defaultText: nil,
            summary: "more plugin folders, colon-separated"),
        Entry(
            key: "max_rate", defaultText: nil,
            summary:
                "requests a second per API (10, 10/s, 600/min, 5000/h): in each process, or across them with shared state"
        ),
        Entry(
            key: "max_concurrency", defaultText: nil,
            summary: "requests in flight per API: in each process, or across them with shared state"),
        Entry(
            key: "jq_memory", defaultText: "4096, or half the memory",
            summary: "the memory an api --jq filter may use, MiB (at least 32)"),
        Entry(
            key: "https_proxy", defaultText: "https_proxy, HTTPS_PROXY",
            summary: "the proxy for https:// URLs"),
        Entry(
            key: "http_proxy", defaultText: "http_proxy, HTTP_PROXY",
            summary: "the proxy for http:// URLs"),
        Entry(
            key: "no_proxy", defaultText: "no_proxy, NO_PROXY",
            summary: "hosts reached without the proxy, comma-separated"),
        Entry(
            key: "ca_bundle", defaultText: "SSL_CERT_FILE, else the system's",
            summary: "the certificate authorities to trust (a PEM file)"),
        Entry(
            variable: "APIMACRO_SHARED_STATE", key: "shared.redis", defaultText: nil,
            summary: "a redis:// URL: one rate-limit budget and cache across processes and machines"),
        Entry(
            variable: "APIMACRO_SHARED_STATE_TIMEOUT", key: "shared.timeout", defaultText: "1",
            summary: "how long to wait for Redis, seconds"),
        Entry(
            variable: "APIMACRO_STATE", defaultText: "sqlite ($APIMACRO_HOME/state.db)",
            summary: "where macros' state lives: sqlite, a postgresql:// URL, or redis (the shared-state server)"),
        Entry(
            variable: "APIMACRO_DATABASE_URL", defaultText: nil,
            summary: "a postgresql:// URL: where apimacro.output(rows, table=...) writes without to="),
        Entry(
            key: "ui.color", defaultText: "auto",
            summary: "colour: auto (a terminal, unless NO_COLOR is set), always or never (--color)"),
        Entry(
            variable: "APIMACRO_KEYRING", defaultText: "auto",
            summary: "where login keeps tokens: auto (the system keyring where one runs, else the 0600 file), "
                + "required or off"),
        Entry(
            variable: "APIMACRO_KEYRING_TIMEOUT", defaultText: "10",
            summary: "the longest one keyring call may take, seconds"),
        Entry(
            variable: "APIMACRO_HOME", defaultText: "$XDG_CONFIG_HOME/apimacro, else ~/.config/apimacro",
            summary: "the folder of config.toml, credentials.json, history, macros/ and plugins/"),
        Entry(
            variable: "APIMACRO_BATCH_JOB", defaultText: "set by batch",
            summary: "the name of the batch job a macro runs as (batch sets it for each job; breakpoint() names it)"),
        // What run's flags say, for `import apimacro` from another Python (ExtensionModule).
        Entry(
            variable: "APIMACRO_RECORD", defaultText: nil,
            summary: "import apimacro only: record the exchanges to this HAR file, written at exit (run's --record)"),
        Entry(
            variable: "APIMACRO_REPLAY", defaultText: nil,
            summary: "import apimacro only: answer from this HAR file, no network (run's --replay)"),
        Entry(
            variable: "APIMACRO_OFFLINE", defaultText: "off",
            summary: "import apimacro only: send nothing, answer from the cache (run's --offline)"),
        Entry(
            variable: "APIMACRO_NO_CACHE", defaultText: "off",
            summary: "import apimacro only: neither read nor write the HTTP cache (run's --no-cache)"),
        Entry(
            variable: "APIMACRO_STATE_KEY", defaultText: nil,
            summary: "import apimacro only: the name apimacro.state is kept under (run's --state-key)"),
    ]

    /// Every setting: apimacro's, then each built-in client's, then the line for plugins.
    public static var all: [Entry] {
        let clients = BuiltInClients.descriptors.flatMap { descriptor in
            descriptor.settings.map { setting in
                Entry(
                    variable: setting.variable, key: "\(descriptor.name).\(setting.key)",
                    defaultText: setting.defaultText, summary: setting.summary)
            }
        }
        let plugins = Entry(
            variable: "APIMACRO_<PLUGIN>_URL", key: "<plugin>.url", defaultText: "the manifest's base_url",
            summary: "a plugin's base URL; its credentials are the variables its manifest declares")
        let limits = [
            Entry(
                variable: "APIMACRO_<NAME>_LIMITS_RATE", key: "<name>.limits.rate",
                defaultText: "a plugin's [limits] rate",
                summary: "a client's or plugin's requests a second, in each process (10/s, 600/min, 5000/h)"),
            Entry(
                variable: "APIMACRO_<NAME>_LIMITS_CONCURRENCY", key: "<name>.limits.concurrency",
                defaultText: "a plugin's [limits] concurrency",
                summary: "a client's or plugin's requests in flight, in each process"),
            Entry(
                variable: "APIMACRO_<NAME>_ACCOUNT", key: nil, defaultText: "the active account (apimacro auth switch)",
                summary: "the stored account a client or plugin uses (--account NAME=LABEL)"),
        ]
        return global + clients + [plugins] + limits
    }

    /// The keys at the top of `config.toml` (`format`, `max_wait`, ...).
    static var topLevelKeys: [String] {
        global.compactMap(\.key).filter { !$0.contains(".") }
    }

    /// The keys of `table` among apimacro's own settings (`shared`: `redis`, `timeout`).
    static func keys(ofTable table: String) -> [String] {
        global.compactMap(\.key).compactMap { key in
            key.hasPrefix(table + ".") ? String(key.dropFirst(table.count + 1)) : nil
        }
    }

    /// `apimacro help environment`: each variable on a line of its own, then its key,
    /// default and what it sets, indented.
    public static var helpText: String {
        var text = """
            apimacro reads these settings; each may be set in the environment or, by its key, in
            $APIMACRO_HOME/config.toml. A flag wins over the environment, the environment over
            config.toml, config.toml over the default.


            """
        for entry in all {
            text += entry.variable + "\n"
            var facts: [String] = []
            if let key = entry.keyText { facts.append("config.toml: \(key)") }
            facts.append("default: \(entry.defaultText ?? "none")")
            text += "    \(entry.summary)\n    \(facts.joined(separator: "; "))\n"
        }
        text += """

            Also read: GITHUB_TOKEN (after APIMACRO_GITHUB_TOKEN), gh's GH_TOKEN and hosts.yml,
            XDG_CONFIG_HOME, XDG_CACHE_HOME (the HTTP cache: $XDG_CACHE_HOME/apimacro, else
            ~/.cache/apimacro), NO_COLOR, SSL_CERT_FILE and the proxy variables.

            """
        return text
    }
}
