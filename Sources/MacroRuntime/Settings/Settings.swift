import Clients
import Foundation
import PluginHost

/// Everything a macro run needs to know about its configuration, resolved once
/// (flags > environment > defaults) and passed down explicitly.
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
    /// `-v`: one line per HTTP exchange on stderr.
    public var verbose: Bool
    /// The default per-request timeout in seconds (30).
    public var requestTimeout: Double
    /// `APIMACRO_MAX_WAIT`: the longest rate-limit wait in seconds (60).
    public var maxWait: Double
    /// The GitHub client's settings (SPEC §2).
    public var github: GitHubConfiguration
    /// `--record FILE.har`: write every exchange to this HAR file (secrets redacted).
    public var record: URL?
    /// `--replay FILE.har`: answer requests from this HAR file, with no network.
    public var replay: URL?
    /// `--offline`: answer only from the cache or the replay file.
    public var offline: Bool
    /// False with `--no-cache`: neither read nor write the HTTP cache.
    public var useCache: Bool
    /// The HTTP cache's folder: `$XDG_CACHE_HOME/apimacro`, else `~/.cache/apimacro`.
    public var cacheDirectory: URL
    /// Folders holding plugin folders, in search order: `APIMACRO_PLUGINS`
    /// (colon-separated), `$APIMACRO_HOME/plugins`, then the checkout's
    /// `plugins/` found by walking up from the executable's real path (or an
    /// installed `PREFIX/share/apimacro/plugins`).
    public var pluginFolders: [URL]
    /// Where a `batch` child writes its request and cache-hit counts when it
    /// ends (the hidden `run --stats-file`); nil (the default) for none.
    public var statsFile: URL?
    /// Whether `-v` may be turned on later (the REPL's `:verbose`); costs a
    /// formatted line per exchange while off, so only the REPL sets it. False by default.
    public var switchableVerbose = false

    /// Resolves settings from command-line values and the environment.
    public init(
        format: OutputFormat? = nil, timeout: Double? = nil, verbose: Bool = false,
        record: URL? = nil, replay: URL? = nil, offline: Bool = false, useCache: Bool = true,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        workingDirectory: URL = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
    ) {
        self.environment = environment
        self.workingDirectory = workingDirectory
        self.timeout = timeout
        self.format = format ?? environment["APIMACRO_FORMAT"].flatMap(OutputFormat.init(rawValue:))
        self.home = Settings.home(environment: environment)
        self.verbose = verbose
        self.requestTimeout = 30
        self.maxWait = environment["APIMACRO_MAX_WAIT"].flatMap(Double.init).flatMap { $0 >= 0 && $0.isFinite ? $0 : nil } ?? 60
        self.github = GitHubConfiguration.fromEnvironment(environment, timeout: requestTimeout, maxWait: maxWait)
        self.record = record
        self.replay = replay
        self.offline = offline
        self.useCache = useCache
        self.cacheDirectory = Settings.cacheDirectory(environment: environment)
        self.pluginFolders = PluginRegistry.folders(environment: environment, home: home, executable: PythonPackage.executable)
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
        let user = environment["HOME"].map { URL(fileURLWithPath: $0) } ?? FileManager.default.homeDirectoryForCurrentUser
        return user.appendingPathComponent(fallback).appendingPathComponent("apimacro")
    }

    /// Values that must never be printed: every non-trivial environment value
    /// whose name says it is a credential (`*_TOKEN`, `*_KEY`, `*_SECRET`, `*_PASSWORD`).
    public var secrets: [String] {
        let markers = ["TOKEN", "_KEY", "SECRET", "PASSWORD"]
        return environment.compactMap { name, value in
            let upper = name.uppercased()
            guard value.count >= 4, markers.contains(where: { upper.hasSuffix($0) }) else { return nil }
            return value
        }
    }
}

/// The formats `apimacro.output` knows.
public enum OutputFormat: String, Sendable, CaseIterable {
    case table, json, csv, ndjson
}
