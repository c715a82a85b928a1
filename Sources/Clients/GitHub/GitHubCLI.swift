public import Platform
import WebAPI

/// Where `gh`, GitHub's command line, keeps its users' tokens, read in `gh`'s own order
/// (https://cli.github.com/manual/gh_help_environment): `GH_TOKEN` or `GITHUB_TOKEN` for
/// github.com (and its `*.ghe.com` tenancies), `GH_ENTERPRISE_TOKEN` or
/// `GITHUB_ENTERPRISE_TOKEN` for any other host; then the host's entry in `hosts.yml`
/// (`$GH_CONFIG_DIR`, else `$XDG_CONFIG_HOME/gh`, else `~/.config/gh`); and when the entry
/// holds none (gh keeps it in the system keyring), `gh auth token --hostname HOST`, if `gh`
/// is on `PATH`, bounded to `commandTimeout` seconds with its stderr kept out of the output.
///
/// Each is only for the host of apimacro's GitHub base URL: a token gh keeps for another
/// host is never sent.
public enum GitHubCLI {
    /// How long `gh auth token` may take.
    public static let commandTimeout: Double = 5

    /// The host `gh` names for the REST base URL `baseURL`: `github.com` for
    /// `https://api.github.com`, `TENANT.ghe.com` for `https://api.TENANT.ghe.com`, `HOST` for a
    /// GitHub Enterprise Server's `https://HOST/api/v3`, the host (with a port other than the
    /// scheme's) otherwise.
    public static func host(forAPI baseURL: String) -> String? {
        guard let origin = Origin(url: baseURL) else { return nil }
        let host = origin.host
        if host == "api.github.com" { return "github.com" }
        if host.hasPrefix("api."), host.hasSuffix(".ghe.com") { return String(host.dropFirst(4)) }
        let defaultPort = origin.scheme == "https" ? 443 : 80
        return origin.port == defaultPort ? host : "\(host):\(origin.port)"
    }

    /// Whether `gh` counts `host` as github.com (then `GH_TOKEN`/`GITHUB_TOKEN` are its
    /// variables; for any other host, the `*_ENTERPRISE_TOKEN` ones).
    public static func isGitHubDotCom(_ host: String) -> Bool {
        host == "github.com" || host.hasSuffix(".ghe.com") || host == "github.localhost"
    }

    /// The folder of `gh`'s files for `environment`.
    public static func configFolder(_ environment: [String: String]) -> URL? {
        if let folder = environment["GH_CONFIG_DIR"], !folder.isEmpty { return URL(fileURLWithPath: folder) }
        if let base = environment["XDG_CONFIG_HOME"], !base.isEmpty {
            return URL(fileURLWithPath: base).appendingPathComponent("gh")
        }
        guard let home = environment["HOME"], !home.isEmpty else { return nil }
        return URL(fileURLWithPath: home).appendingPathComponent(".config").appendingPathComponent("gh")
    }

    /// `gh`'s sources in `gh`'s order, after apimacro's own variables: its variables for the
    /// base URL's host, `hosts.yml`, `gh auth token`.
    static let sources: [CredentialSource] = [
        variable("GH_TOKEN", forGitHubDotCom: true), variable("GH_ENTERPRISE_TOKEN", forGitHubDotCom: false),
        variable("GITHUB_ENTERPRISE_TOKEN", forGitHubDotCom: false), hostsFile, command,
    ]

    /// The host of the view's base URL.
    static func host(in view: SettingsView) -> String? {
        host(forAPI: view.value(GitHub.url) ?? GitHubConfiguration.defaultBaseURL)
    }

    /// `gh`'s variables, as credential sources: each holds a token only for the hosts `gh`
    /// uses it for.
    static func variable(_ name: String, forGitHubDotCom: Bool) -> CredentialSource {
        CredentialSource(
            name: "env \(name)", variable: name,
            lookUp: { view in
                guard let host = host(in: view), isGitHubDotCom(host) == forGitHubDotCom else {
                    return CredentialLookup()
                }
                return CredentialLookup(secret: view.value(name).map(Secret.init))
            })
    }

    /// The host's token in `gh`'s `hosts.yml`.
    static let hostsFile = CredentialSource(
        name: "gh: hosts.yml", isDeferred: true,
        lookUp: { view in
            guard let host = host(in: view), let folder = configFolder(view.environment) else {
                return CredentialLookup()
            }
            return hostsFileToken(folder.appendingPathComponent("hosts.yml"), host: host)
        })

    /// The token `gh auth token --hostname HOST` prints, when `gh` is on `PATH`.
    static let command = CredentialSource(name: "gh: gh auth token", isDeferred: true, lookUp: commandToken)

    /// What `gh auth token --hostname HOST` prints for the view's host.
    @Sendable static func commandToken(_ view: SettingsView) -> CredentialLookup {
        guard let host = host(in: view), let executable = executable(in: view.environment["PATH"]) else {
            return CredentialLookup()
        }
        switch GHCommand.run(
            executable: executable, arguments: ["auth", "token", "--hostname", host], environment: view.environment,
            timeout: commandTimeout)
        {
        case .token(let token):
            return CredentialLookup(secret: Secret(token))
        case .failed:
            // Not logged in to that host: no token, and nothing wrong.
            return CredentialLookup()
        case .timedOut:
            return CredentialLookup(
                problem:
                    "gh auth token --hostname \(host) did not answer within \(Int(commandTimeout)) s "
                    + "(it was stopped); no token from gh")
        case .notStarted(let reason):
            return CredentialLookup(problem: "cannot run \(executable): \(reason)")
        }
    }

    /// `hosts.yml`'s token for `host`, read under the owner rule of apimacro's own files
    /// (`SecureFile.exposure`: gh writes it mode 0600; one that another user owns or may change
    /// is not read).
    static func hostsFileToken(_ file: URL, host: String) -> CredentialLookup {
        do {
            guard
                let loaded = try SecureFile.load(
                    file, followingLinks: true,
                    refuse: { SecureFile.exposure($0, path: file.path, isPrivate: false) })
            else { return CredentialLookup() }
            let parsed = try GHHostsFile(parsing: String(decoding: loaded.bytes, as: UTF8.self))
            // The entry of exactly this host: a bare host's entry is for its default port, as gh
            // keeps it, and another port is another origin (issue 35).
            let token = parsed.token(for: host)
            return CredentialLookup(secret: token.map(Secret.init), detail: file.path)
        } catch let error as GHHostsFile.Unreadable {
            return CredentialLookup(
                problem: "\(file.path) is not a hosts.yml apimacro reads (\(error)); no token from it")
        } catch {
            return CredentialLookup(problem: SystemErrorText.describe(error))
        }
    }

    /// The first executable `gh` in the folders of `path`.
    static func executable(in path: String?) -> String? {
        for folder in (path ?? "").split(separator: ":") where folder.hasPrefix("/") {
            let candidate = "\(folder)/gh"
            var info = stat()
            if stat(candidate, &info) == 0, info.st_mode & S_IFMT == S_IFREG, access(candidate, X_OK) == 0 {
                return candidate
            }
        }
        return nil
    }
}
