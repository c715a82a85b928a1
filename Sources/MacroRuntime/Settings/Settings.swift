public import Clients
public import Platform
import PluginHost
public import WebAPI

/// Everything a macro run needs to know about its configuration, resolved once
/// (flags > environment > config.toml > defaults) and passed down explicitly to
/// every client and plugin.
public struct Settings: Sendable {
    /// How `apimacro.output` prints when the macro does not say; nil means
    /// "table on a terminal, else json".
    public var format: OutputFormat?
    /// Wall-clock limit per macro in seconds; nil for none (the default).
    public var timeout: Double?
    /// `$APIMACRO_HOME`: `$XDG_CONFIG_HOME/apimacro`, else `~/.config/apimacro`.
    public var home: URL
    /// The working directory, where `./macros/` is looked up.
    public var workingDirectory: URL
    /// The environment of the process, passed in so tests never call `setenv`.
    public var environment: [String: String]
    /// Forward proxies and the certificate authorities to trust, for every client and plugin
    /// (`HTTPS_PROXY`, `HTTP_PROXY`, `NO_PROXY`, `APIMACRO_CA_BUNDLE`, `SSL_CERT_FILE`; see `NetworkResolver`).
    public var network: NetworkSettings
    /// `-v`: one line per HTTP exchange on stderr.
    public var verbose: Bool
    /// `-vv`: each request and response in full (headers, body up to 4 KiB), redacted, besides the `-v` line.
    ///
    /// False by default.
    public var fullExchanges = false
    /// The default per-request timeout in seconds: `--request-timeout`,
    /// `APIMACRO_REQUEST_TIMEOUT`, `request_timeout` in config.toml (30).
    public var requestTimeout: Double
    /// `APIMACRO_MAX_WAIT`: the longest rate-limit wait in seconds (60).
    public var maxWait: Double
    /// `--record FILE.har`: write every exchange to this HAR file (secrets redacted).
    public var record: URL?
    /// `--replay FILE.har`: answer requests from this HAR file, with no network.
    public var replay: URL?
    /// `--offline`: answer only from the cache or the replay file.
    public var offline: Bool
    /// False with `--no-cache`: neither read nor write the HTTP cache.
    public var useCache: Bool
    /// Whether a cached copy answers when the network fails or the server answers 5xx
    /// (stale-if-error, with a warning): `APIMACRO_STALE_IF_ERROR`, `stale_if_error` in
    /// config.toml (on); `--no-stale` turns it off, revalidation stays.
    public var staleIfError = true
    /// The HTTP cache's folder: `$XDG_CACHE_HOME/apimacro`, else `~/.cache/apimacro`.
    public var cacheDirectory: URL
    /// Folders holding plugin folders, in search order: `APIMACRO_PLUGINS`
    /// (colon-separated), `$APIMACRO_HOME/plugins`, then the shipped plugins: an
    /// installed `PREFIX/share/apimacro/plugins` beside the executable's real path, else
    /// the checkout's `plugins/` found by walking up from it.
    public var pluginFolders: [URL]
    /// `APIMACRO_SHARED_STATE` (or `[shared] redis` in config.toml): the Redis server whose
    /// rate-limit budgets and cache every apimacro process shares; nil (the default) for none.
    public var sharedState: SharedStateAddress?
    /// Where `sharedState` came from, for messages (the variable, or the config.toml key).
    public var sharedStateSource = "APIMACRO_SHARED_STATE"
    /// `APIMACRO_SHARED_STATE_TIMEOUT` (or `[shared] timeout` in config.toml): the longest one
    /// Redis call (connect, or a command and its reply) may take, in seconds (1).
    public var sharedStateTimeout = 1.0
    /// `APIMACRO_MAX_RATE` and `APIMACRO_MAX_CONCURRENCY`: the shared limiter with `sharedState`,
    /// else held in this process (`LocalLimitStage`).
    public var governorLimits = GovernorLimits()
    /// `[NAME.limits]` in config.toml (`APIMACRO_<NAME>_LIMITS_RATE`, `_LIMITS_CONCURRENCY`): a
    /// client's or plugin's limits held in each process, by its name (`LocalLimitStage`).
    public var clientLimits: [String: LocalLimits] = [:]
    /// `--account NAME=LABEL` over `APIMACRO_<NAME>_ACCOUNT`: the stored account each client
    /// named uses instead of its active one, by client name (`github`: `work`).
    public var accounts: [String: String] = [:]
    /// `APIMACRO_KEYRING` (`off`, `auto`, `required`) and `APIMACRO_KEYRING_TIMEOUT`: where
    /// `apimacro login` keeps tokens besides the 0600 file.
    public var keyring = Keyring.none
    /// `APIMACRO_JQ_MEMORY` (or `jq_memory` in config.toml): the most memory an `api --jq` filter's
    /// child may allocate, in MiB; nil for the default (`JQChild.defaultMemoryLimit`).
    public var jqMemory: Int?
    /// The variables `config.toml` set (those the environment does not), each with the key it
    /// came from (`APIMACRO_GITHUB_TOKEN`: `github.token`), so that messages name the key.
    public var configFileKeys: [String: String] = [:]
    /// When output is coloured (`--color`, `[ui] color`, `NO_COLOR`; see `ColorChoice`).
    ///
    /// Default `auto`: on a terminal.
    public var color = ColorChoice.auto
    /// `--wide`: tables keep every cell whole instead of fitting the terminal's width.
    public var wide = false
    /// `--state-key NAME`: the state a run of `-c`, standard input, `-m` or the REPL uses (a macro
    /// file's is its name), and overrides a file's.
    public var stateKey: String?
    /// `run --output FILE`: where `apimacro.output` writes instead of stdout.
    public var output: String?
    /// `run --key FIELD`: the upsert key of a SQLite `--output`.
    public var outputKey: String?
    /// Whether `-v` may be turned on later (the REPL's `:verbose`); costs a
    /// formatted line per exchange while off, so only the REPL sets it.
    ///
    /// False by default.
    public var switchableVerbose = false
    /// Where a `batch` child tells its parent the secrets it knows beyond the parent's own (a
    /// plugin's key, a token learned during the run), so that the parent redacts them from the
    /// child's output; set by `run --stats-file` (`LearnedSecrets`).
    ///
    /// Nil: nowhere (default).
    public var learnedSecretsFile: URL?

    /// Resolves settings from command-line values and the environment (with
    /// `config.toml` already merged beneath it, see `load`).
    ///
    /// Every value is checked: a bad one throws a one-line `MacroError` naming
    /// where it came from (`origins` maps a variable to its `config.toml` key;
    /// otherwise the variable itself is named), the key and the accepted values.
    public init(
        format: String? = nil, timeout: Double? = nil, requestTimeout: Double? = nil, verbose: Bool = false,
        record: URL? = nil, replay: URL? = nil, offline: Bool = false, useCache: Bool = true, color: String? = nil,
        environment: [String: String] = ProcessEnvironment.variables,
        origins: [String: String] = [:],
        workingDirectory: URL = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
    ) throws {
        let check = SettingCheck(environment: environment, origins: origins)
        self.environment = environment
        self.workingDirectory = workingDirectory
        if let timeout { try SettingCheck.positive(timeout, source: "--timeout") }
        self.timeout = timeout
        if let format {
            self.format = try SettingCheck.format(format, source: "--format")
        } else {
            self.format = try check.value("APIMACRO_FORMAT").map {
                try SettingCheck.format($0.value, source: $0.source)
            }
        }
        self.home = Settings.home(environment: environment)
        self.color = try ColorChoice.resolve(flag: color, check: check)
        self.verbose = verbose
        if let requestTimeout {
            try SettingCheck.positive(requestTimeout, source: "--request-timeout")
            self.requestTimeout = requestTimeout
        } else {
            self.requestTimeout = try check.seconds("APIMACRO_REQUEST_TIMEOUT", zeroAllowed: false) ?? 30
        }
        self.maxWait = try check.seconds("APIMACRO_MAX_WAIT", zeroAllowed: true) ?? 60
        try check.clientVariables()
        self.network = try NetworkResolver.resolve(check, workingDirectory: workingDirectory)
        self.record = record
        self.replay = replay
        self.offline = offline
        self.useCache = useCache
        self.staleIfError = try check.onOff("APIMACRO_STALE_IF_ERROR") ?? true
        self.cacheDirectory = Settings.cacheDirectory(environment: environment)
        self.pluginFolders = PluginRegistry.folders(
            environment: environment, home: home, executable: PythonPackage.executable)
        if let found = check.value("APIMACRO_SHARED_STATE") ?? check.value(Settings.sharedStateFileVariable) {
            sharedStateSource = found.source
            do {
                sharedState = try SharedStateAddress(parsing: found.value, source: found.source)
            } catch let error as APIError {
                throw MacroError(error.message)
            }
        }
        sharedStateTimeout =
            try check.seconds("APIMACRO_SHARED_STATE_TIMEOUT", zeroAllowed: false)
            ?? check.seconds(Settings.sharedStateTimeoutFileVariable, zeroAllowed: false) ?? 1
        governorLimits = GovernorLimits(
            maxRate: try check.rate("APIMACRO_MAX_RATE"),
            maxConcurrency: try check.count("APIMACRO_MAX_CONCURRENCY"))
        jqMemory = try check.count("APIMACRO_JQ_MEMORY", atLeast: JQChild.smallestMemoryLimit, unit: "MiB")
        clientLimits = try Self.clientLimits(check: check, environment: environment)
        accounts = try Self.accounts(check: check, environment: environment)
        do {
            keyring = try Keyring(home: home, environment: environment)
        } catch let error as APIError {
            throw MacroError(error.message)
        }
    }

    /// The tokens `apimacro login` stored, in the keyring these settings choose, reading the
    /// accounts `chosen` by client name.
    public func credentialStore(chosen: [String: String] = [:]) -> CredentialStore {
        CredentialStore(home: home, chosen: chosen, keyring: keyring)
    }

    /// The variable `[shared] redis` in config.toml stands for (`APIMACRO_SHARED_STATE` wins over it).
    static let sharedStateFileVariable = "APIMACRO_SHARED_REDIS"
    /// The variable `[shared] timeout` in config.toml stands for (`APIMACRO_SHARED_STATE_TIMEOUT` wins over it).
    static let sharedStateTimeoutFileVariable = "APIMACRO_SHARED_TIMEOUT"

    /// The settings of a command: `flags` over the process environment over
    /// `$APIMACRO_HOME/config.toml` over the defaults, resolved and checked once.
    ///
    /// An unknown key in `config.toml`, or a value of the wrong type, is an error too (with
    /// "did you mean", or the line to write).
    public static func load(
        format: String? = nil, timeout: Double? = nil, requestTimeout: Double? = nil, verbose: Bool = false,
        record: URL? = nil, replay: URL? = nil, offline: Bool = false, useCache: Bool = true, color: String? = nil,
        process: [String: String] = ProcessEnvironment.variables
    ) throws -> Settings {
        let home = home(environment: process)
        // The folder decides which config.toml, plugins and macros run with the user's tokens.
        if let (folder, problem) = SecureFile.folderExposure(home) {
            let place = folder == home.resolvingSymlinksInPath().path ? "" : "the folder above it, \(folder): "
            throw MacroError(
                "refusing to use APIMACRO_HOME \(home.path), where another user could put a config.toml, "
                    + "a plugin or a macro: \(place)\(problem)")
        }
        let file = ConfigFile(home: home)
        let entries = try file.entries()
        var environment = process
        var origins: [String: String] = [:]
        var keys: [String: String] = [:]
        for entry in entries where process[entry.variable] == nil {
            environment[entry.variable] = entry.value
            origins[entry.variable] = "\(file.path.path): \(entry.key)"
            keys[entry.variable] = entry.key
        }
        // Keys and their types first: `format = 5` is a number where a string goes, not a bad format.
        try file.checkKeys(
            entries,
            pluginFolders: PluginRegistry.folders(
                environment: environment, home: home, executable: PythonPackage.executable))
        var settings = try Settings(
            format: format, timeout: timeout, requestTimeout: requestTimeout, verbose: verbose, record: record,
            replay: replay,
            offline: offline, useCache: useCache, color: color, environment: environment, origins: origins)
        settings.configFileKeys = keys
        return settings
    }

    /// What a client reads its configuration from (each client's configuration type takes
    /// one: `GitHubConfiguration(settings.view())`): the environment, the request timeout and
    /// rate-limit wait, and `storedCredential`, what `apimacro login` stored for it.
    public func view(storedCredential: Secret? = nil) -> SettingsView {
        SettingsView(
            environment: environment, requestTimeout: requestTimeout, maxWait: maxWait,
            storedCredential: storedCredential)
    }

    static func cacheDirectory(environment: [String: String]) -> URL {
        xdgFolder("XDG_CACHE_HOME", else: ".cache", environment: environment)
    }

    static func home(environment: [String: String]) -> URL {
        if let home = environment["APIMACRO_HOME"], !home.isEmpty { return URL(fileURLWithPath: home) }
        return xdgFolder("XDG_CONFIG_HOME", else: ".config", environment: environment)
    }

    /// `$VARIABLE/apimacro`, else `~/FALLBACK/apimacro` (the XDG base-directory rule).
    private static func xdgFolder(_ variable: String, else fallback: String, environment: [String: String]) -> URL {
        if let base = environment[variable], !base.isEmpty {
            return URL(fileURLWithPath: base).appendingPathComponent("apimacro")
        }
        let user =
            environment["HOME"].map { URL(fileURLWithPath: $0) } ?? FileManager.default.homeDirectoryForCurrentUser
        return user.appendingPathComponent(fallback).appendingPathComponent("apimacro")
    }

    /// Has the run tell the `batch` that started it (whose `--stats-file` is `stats`) every
    /// secret it learns (`LearnedSecrets`).
    public mutating func reportLearnedSecrets(besideStats stats: URL) {
        learnedSecretsFile = LearnedSecrets(besideStats: stats).file
    }

    /// Values that must never be printed: every environment value
    /// whose name says it is a credential (`*_TOKEN`, `*_KEY`, `*_SECRET`, `*_PASSWORD`),
    /// and the credentials of the proxy URLs in every form they take (see `ProxyURL.secrets`).
    public var secrets: [String] {
        let named = environment.compactMap { name, value -> String? in
            guard !value.isEmpty, Settings.isSecretVariable(name) else { return nil }
            return value
        }
        // The shared state's password, as written and as the URL carries it (percent-encoded).
        let shared =
            sharedState?.password.map { password in
                [
                    password.revealed,
                    password.revealed.percentEncoded(allowing: URLBytes.alphanumeric),
                ]
            } ?? []
        let proxies = [network.httpsProxy, network.httpProxy].compactMap { $0 }
        return named + shared.filter { $0.count >= 4 }
            + proxies.flatMap { (try? ProxyURL.parse($0, source: "proxy"))?.secrets ?? [] }
    }
}

extension Settings {
    /// Whether a variable's name says it holds a credential: `*TOKEN`, `*_KEY`, `*SECRET`, `*PASSWORD`
    /// (its value is redacted, and `config.toml` holding it must be private), unless a built-in
    /// client declares it holds none (`ClientSetting.holdsNoSecret`: a key file's path).
    static func isSecretVariable(_ name: String) -> Bool {
        let upper = name.uppercased()
        guard ["TOKEN", "_KEY", "SECRET", "PASSWORD"].contains(where: { upper.hasSuffix($0) }) else { return false }
        return !BuiltInClients.descriptors.contains {
            $0.settings.contains { $0.holdsNoSecret && $0.variable == upper }
        }
    }
}

/// The formats `apimacro.output` knows.
public enum OutputFormat: String, Sendable, CaseIterable {
    case table, json, csv, ndjson
}

extension Settings {
    /// Every `APIMACRO_<NAME>_ACCOUNT` set: the account label, by the client's name.
    static func accounts(check: SettingCheck, environment: [String: String]) throws -> [String: String] {
        var accounts: [String: String] = [:]
        for variable in environment.keys.sorted()
        where variable.hasPrefix("APIMACRO_") && variable.hasSuffix("_ACCOUNT") {
            let name = variable.dropFirst("APIMACRO_".count).dropLast("_ACCOUNT".count)
            guard !name.isEmpty, let found = check.value(variable) else { continue }
            let label = found.value.trimmingWhitespace()
            guard CredentialStore.isLabel(label) else {
                throw MacroError(
                    "\(found.source): '\(found.value)' is not an account label; accepted: the label of an account "
                        + "apimacro login stored (apimacro auth status lists them), such as work")
            }
            accounts[name.lowercased()] = label
        }
        return accounts
    }

    /// Takes `--account NAME=LABEL` (each given), over the environment's `APIMACRO_<NAME>_ACCOUNT`.
    ///
    /// - Throws: `MacroError` for a value that is not `NAME=LABEL`.
    public mutating func choose(accounts flags: [String]) throws {
        for flag in flags {
            let parts = flag.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, !parts[0].isEmpty, CredentialStore.isLabel(parts[1]) else {
                throw MacroError(
                    "--account takes NAME=LABEL, such as --account github=work (a client and the label of one of "
                        + "its stored accounts: apimacro auth status lists them), not '\(flag)'")
            }
            accounts[parts[0].lowercased()] = parts[1]
        }
    }

    /// Every `APIMACRO_<NAME>_LIMITS_RATE` and `_LIMITS_CONCURRENCY` set, by the client's name.
    static func clientLimits(check: SettingCheck, environment: [String: String]) throws -> [String: LocalLimits] {
        var limits: [String: LocalLimits] = [:]
        let suffixes = ["_LIMITS_RATE", "_LIMITS_CONCURRENCY"]
        let names = Set(
            environment.keys.compactMap { variable -> String? in
                guard variable.hasPrefix("APIMACRO_"), let suffix = suffixes.first(where: variable.hasSuffix) else {
                    return nil
                }
                let name = variable.dropFirst("APIMACRO_".count).dropLast(suffix.count)
                return name.isEmpty ? nil : String(name)
            })
        for name in names.sorted() {
            let rateVariable = "APIMACRO_\(name)_LIMITS_RATE"
            let capVariable = "APIMACRO_\(name)_LIMITS_CONCURRENCY"
            let rate = try check.rate(rateVariable)
            let cap = try check.count(capVariable)
            guard rate != nil || cap != nil else { continue }
            limits[name.lowercased()] = LocalLimits(
                rate: rate, concurrency: cap, rateSource: check.value(rateVariable)?.source ?? rateVariable,
                concurrencySource: check.value(capVariable)?.source ?? capVariable)
        }
        return limits
    }
}
