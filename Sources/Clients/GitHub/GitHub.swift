import Platform
import WebAPI

/// GitHub as apimacro knows it: its settings and where its token comes from
/// (`descriptor`); `GitHubConfiguration` reads them, `GitHubRouter` builds each endpoint's
/// request and `GitHubClient` sends it, with `Link` pagination.
public enum GitHub {
    /// The client's name.
    public static let name = "github"
    /// `APIMACRO_GITHUB_URL` (`[github] url`): the REST API's base URL.
    public static let url = ClientSetting.url(client: name, key: "url").described(
        "the REST API's base URL (GitHub Enterprise Server: https://HOST/api/v3)", default: "https://api.github.com")
    /// `APIMACRO_GITHUB_TOKEN` (`[github] token`): the token, over `GITHUB_TOKEN`.
    public static let token = ClientSetting(client: name, key: "token").described(
        "the token (else GITHUB_TOKEN, else the stored login, else gh's)")
    /// `GITHUB_TOKEN`, the variable other GitHub tools read: the token when no setting holds one.
    public static let sharedToken = "GITHUB_TOKEN"
    /// `APIMACRO_GITHUB_API_VERSION` (`[github] api_version`): `X-GitHub-Api-Version`, a date.
    public static let apiVersion = ClientSetting(client: name, key: "api_version") { text in
        text.wholeMatch(of: /[0-9]{4}-[0-9]{2}-[0-9]{2}/) != nil
            ? nil : "'\(text)' is not a GitHub API version; accepted: a date such as 2022-11-28"
    }.described("the X-GitHub-Api-Version header", default: "2022-11-28")
    /// `APIMACRO_GITHUB_GRAPHQL_URL` (`[github] graphql_url`): the GraphQL endpoint, when it is
    /// not where the base URL implies.
    public static let graphQLURL = ClientSetting.url(client: name, key: "graphql_url").described(
        "the GraphQL endpoint", default: "the base URL's")

    /// `APIMACRO_GITHUB_APP_ID` (`[github] app_id`): a GitHub App's client ID (`Iv23…`) or
    /// numeric ID, to authenticate as the App (`GitHubAppAuth`).
    public static let appID = ClientSetting(client: name, key: "app_id") { text in
        text.count <= 100 && text.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7f && $0 != "\"" })
            ? nil : "'\(text)' is not a GitHub App ID; accepted: the App's client ID (Iv23…) or its numeric ID"
    }.described("a GitHub App's client ID or numeric ID, to act as the App")
    /// `APIMACRO_GITHUB_APP_KEY` (`[github] app_key`): the path of the App's private key (PEM),
    /// which must be readable by its owner only.
    public static let appKey = ClientSetting(client: name, key: "app_key", holdsNoSecret: true).described(
        "the path of the App's private key (PEM), readable by its owner only")
    /// `APIMACRO_GITHUB_INSTALLATION_ID` (`[github] installation_id`): the App's installation to
    /// act as; unset, it is found for the repository, organisation or user a request names, else
    /// it is the App's only one.
    public static let installationID = ClientSetting(client: name, key: "installation_id") { text in
        Int(text).map { $0 > 0 } == true
            ? nil : "'\(text)' is not an installation ID; accepted: a number such as 12345678"
    }.described("the App's installation to act as", default: "found for the request")
    /// `APIMACRO_GITHUB_PACE` (`[github] pace`): `on` (the default) paces requests to GitHub's
    /// secondary limits (`GitHubSecondaryLimits`); `off` for a server without them (GitHub
    /// Enterprise Server has rate limits off unless its administrator turns them on).
    public static let pace = ClientSetting(client: name, key: "pace") { text in
        ["on", "off"].contains(text) ? nil : "'\(text)' is not a pace; accepted: on (the default) or off"
    }.described("pace requests to GitHub's secondary limits: on or off", default: "on")

    /// `apimacro login github`: GitHub's OAuth device flow (as `gh auth login`), with the
    /// user's own OAuth App (`APIMACRO_GITHUB_CLIENT_ID`).
    public static let login = deviceLogin()

    /// The device-flow login, bound to the API it makes tokens for: github.com's for
    /// api.github.com, HOST's for `https://HOST/api/v3`.
    static func deviceLogin() -> OAuthDeviceLogin {
        var login = deviceFlow
        login.tokenDestination = { view in
            let apiURL = view.value(url) ?? GitHubConfiguration.defaultBaseURL
            return (apiURL, GitHubCLI.host(forAPI: apiURL) ?? "")
        }
        return login
    }

    static let deviceFlow = OAuthDeviceLogin(
        name: name, scope: "repo read:org gist",
        help:
            "GitHub's device flow, as gh auth login: prints a one-time code and the page to enter it on "
            + "(https://github.com/login/device), waits, and stores the token. Needs APIMACRO_GITHUB_CLIENT_ID "
            + "(your OAuth App's client ID, its device flow enabled); --hostname HOST for GitHub Enterprise "
            + "Server; --with-token reads a token from standard input instead.",
        defaultHost: "github.com",
        enableHint:
            "tick \"Enable Device Flow\" on the app's settings page (GitHub: Settings, Developer settings, "
            + "OAuth Apps or GitHub Apps, the app)")

    /// GitHub for `auth status`, `config.toml` and the setting checks: a GitHub App's
    /// installation token when the App's ID and key are set, else the token from
    /// `APIMACRO_GITHUB_TOKEN`, else `GITHUB_TOKEN`, else the one `apimacro login github`
    /// stored, else where `gh` keeps it for the base URL's host (`GitHubCLI`: `GH_TOKEN`, the
    /// enterprise variables, `hosts.yml`, `gh auth token`, the last two read on first use).
    public static let descriptor = ClientDescriptor(
        name: name,
        settings: [url, token, apiVersion, graphQLURL, appID, appKey, installationID, pace] + login.settings,
        credentialSources: [GitHubAppAuth.source, .variable(token.variable), .variable(sharedToken), .storedLogin]
            + GitHubCLI.sources,
        login: .deviceFlow(login),
        identity: { view in view.value(appID) == nil ? identity : appIdentity })

    /// `auth status --check` for a GitHub App: its installation token is minted as for a macro,
    /// and `GET /installation/repositories` tells how many repositories it reaches
    /// (https://docs.github.com/rest/apps/installations#list-repositories-accessible-to-the-app-installation).
    public static let appIdentity = IdentityCheck(
        Request("GET", "/installation/repositories", query: [("per_page", "1")])
    ) { response in
        let total = JSONPath.string(in: response.body, path: ["total_count"])
        return Identity(
            account: "GitHub App installation", facts: total.map { ["\($0) repositories it reaches"] } ?? [])
    }

    /// `auth status --check`, as `gh auth status`: `GET /user` names the token's account,
    /// `X-OAuth-Scopes` a classic token's scopes (a fine-grained token's answer has none) and
    /// `GitHub-Authentication-Token-Expiration` an expiring token's end (GitHub's REST docs,
    /// "Scopes for OAuth apps" and "Authenticating to the REST API").
    public static let identity = IdentityCheck(Request("GET", "/user")) { response in
        var facts: [String] = []
        if let scopes = response.headers["X-OAuth-Scopes"]?.trimmingWhitespace() {
            facts.append(scopes.isEmpty ? "no scopes" : "scopes: \(scopes)")
        } else {
            facts.append("scopes not listed (a fine-grained token)")
        }
        if let end = response.headers["GitHub-Authentication-Token-Expiration"] {
            facts.append("expires \(end)")
        }
        return Identity(
            account: JSONPath.string(in: response.body, path: ["login"]) ?? "an account GitHub did not name",
            facts: facts)
    }
}

extension GitHub {
    /// The GitHub client the settings in `view` describe, on `context`.
    ///
    /// Its token (a variable, the stored login renewed when due, `gh`'s read on first use, or a
    /// GitHub App's), its warnings and the secrets it learns: the one place a GitHub client is made.
    public static func client(in view: SettingsView, on context: ClientContext) -> GitHubClient {
        let configuration = GitHubConfiguration(view)
        return GitHubClient(
            configuration: configuration, transport: context.transport, log: context.log, redactor: context.redactor,
            warn: context.warn, learned: context.learned, appNetwork: context.network,
            storedLogin: GitHubLoginRefresh.due(configuration: configuration, view: view, context: context))
    }
}
