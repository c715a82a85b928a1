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

        /// The key as a user writes it in `config.toml`: `max_wait`, `[github] url`.
        public var keyText: String? {
            guard let key else { return nil }
            let parts = key.split(separator: ".", maxSplits: 1)
            return parts.count == 2 ? "[\(parts[0])] \(parts[1])" : key
        }
    }

    /// apimacro's own settings, in the order `config.toml`'s top-level keys are listed; the
    /// last five are what run's flags say, for `import apimacro` from another Python
    /// (`ExtensionModule`).
    public static let global = entries(
        """
        format | table on a terminal, else json | the output format: table, json, csv or ndjson (--format)
        max_wait | 60 | the longest rate-limit wait, seconds
        request_timeout | 30 | each request's timeout, seconds (--request-timeout)
        stale_if_error | on
            | serve a cached copy, with a warning, when the network fails (off: --no-stale)
        plugins | none | more plugin folders, colon-separated
        max_rate | none
            | requests a second per API (10, 10/s, 600/min, 5000/h): in each process, or across them with shared state
        max_concurrency | none | requests in flight per API: in each process, or across them with shared state
        jq_memory | 4096, or half the memory | the memory an api --jq filter may use, MiB (at least 32)
        https_proxy | https_proxy, HTTPS_PROXY | the proxy for https:// URLs
        http_proxy | http_proxy, HTTP_PROXY | the proxy for http:// URLs
        no_proxy | no_proxy, NO_PROXY | hosts reached without the proxy, comma-separated
        ca_bundle | SSL_CERT_FILE, else the system's | the certificate authorities to trust (a PEM file)
        APIMACRO_SHARED_STATE shared.redis | none
            | a redis:// URL: one rate-limit budget and cache across processes and machines
        APIMACRO_SHARED_STATE_TIMEOUT shared.timeout | 1 | how long to wait for Redis, seconds
        APIMACRO_STATE | sqlite ($APIMACRO_HOME/state.db)
            | where macros' state lives: sqlite, a postgresql:// URL, or redis (the shared-state server)
        APIMACRO_DATABASE_URL | none
            | a postgresql:// URL: where apimacro.output(rows, table=...) writes without to=
        ui.color | auto | colour: auto (a terminal, unless NO_COLOR is set), always or never (--color)
        APIMACRO_KEYRING | auto
            | where login keeps tokens: auto (the system keyring where one runs, else the 0600 file), required or off
        APIMACRO_KEYRING_TIMEOUT | 10 | the longest one keyring call may take, seconds
        APIMACRO_HOME | $XDG_CONFIG_HOME/apimacro, else ~/.config/apimacro
            | the folder of config.toml, credentials.json, history, macros/ and plugins/
        APIMACRO_BATCH_JOB | set by batch
            | the name of the batch job a macro runs as (batch sets it for each job; breakpoint() names it)
        APIMACRO_RECORD | none
            | import apimacro only: record the exchanges to this HAR file, written at exit (run's --record)
        APIMACRO_REPLAY | none | import apimacro only: answer from this HAR file, no network (run's --replay)
        APIMACRO_OFFLINE | off | import apimacro only: send nothing, answer from the cache (run's --offline)
        APIMACRO_NO_CACHE | off | import apimacro only: neither read nor write the HTTP cache (run's --no-cache)
        APIMACRO_STATE_KEY | none | import apimacro only: the name apimacro.state is kept under (run's --state-key)
        """)

    /// The settings every plugin and client has, listed after the clients' own.
    static let perClient = entries(
        """
        APIMACRO_<PLUGIN>_URL <plugin>.url | the manifest's base_url
            | a plugin's base URL; its credentials are the variables its manifest declares
        APIMACRO_<NAME>_LIMITS_RATE <name>.limits.rate | a plugin's [limits] rate
            | a client's or plugin's requests a second, in each process (10/s, 600/min, 5000/h)
        APIMACRO_<NAME>_LIMITS_CONCURRENCY <name>.limits.concurrency | a plugin's [limits] concurrency
            | a client's or plugin's requests in flight, in each process
        APIMACRO_<NAME>_ACCOUNT | the active account (apimacro auth switch)
            | the stored account a client or plugin uses (--account NAME=LABEL)
        """)

    /// Every setting: apimacro's, then each built-in client's, then the ones of every plugin
    /// and client.
    public static var all: [Entry] {
        let clients = BuiltInClients.descriptors.flatMap { descriptor in
            descriptor.settings.map { setting in
                Entry(
                    variable: setting.variable, key: "\(descriptor.name).\(setting.key)",
                    defaultText: setting.defaultText, summary: setting.summary)
            }
        }
        return global + clients + perClient
    }

    /// The settings `table` lists, a line each: `NAME | default | what it sets`.
    ///
    /// A line that starts with more space goes on with the one before; the default is `none`
    /// when there is none. `NAME` is a key of `config.toml` (`max_wait`, `ui.color`), whose
    /// variable is `APIMACRO_` and the key in capitals, a table's dot an underscore
    /// (`APIMACRO_UI_COLOR`); or a variable with no key (`APIMACRO_STATE`); or a variable and
    /// its key (`APIMACRO_SHARED_STATE shared.redis`).
    static func entries(_ table: String) -> [Entry] {
        var rows: [String] = []
        for line in table.split(separator: "\n") {
            if line.first == " ", let last = rows.indices.last {
                rows[last] += " " + line.drop { $0 == " " }
            } else {
                rows.append(String(line))
            }
        }
        return rows.map { row in
            let columns = row.split(separator: " | ", maxSplits: 2, omittingEmptySubsequences: false)
            let names = columns[0].split(separator: " ").map(String.init)
            let defaultText = columns.count > 1 && columns[1] != "none" ? String(columns[1]) : nil
            let summary = columns.count > 2 ? String(columns[2]) : ""
            if names.count > 1 {
                return Entry(variable: names[0], key: names[1], defaultText: defaultText, summary: summary)
            } else if !names[0].hasPrefix("APIMACRO_") {
                let variable = "APIMACRO_" + String(names[0].uppercased().map { $0 == "." ? "_" : $0 })
                return Entry(variable: variable, key: names[0], defaultText: defaultText, summary: summary)
            } else {
                return Entry(variable: names[0], key: nil, defaultText: defaultText, summary: summary)
            }
        }
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
