import Foundation

/// GitHub as apimacro knows it: its settings and where its token comes from
/// (`descriptor`); `GitHubConfiguration` reads them, `GitHubRouter` builds each endpoint's
/// request and `GitHubClient` sends it, with `Link` pagination.
public enum GitHub {
    /// The client's name.
    public static let name = "github"
    /// `APIMACRO_GITHUB_URL` (`[github] url`): the REST API's base URL.
    public static let url = ClientSetting.url(client: name, key: "url")
    /// `APIMACRO_GITHUB_TOKEN` (`[github] token`): the token, over `GITHUB_TOKEN`.
    public static let token = ClientSetting(client: name, key: "token")
    /// `APIMACRO_GITHUB_API_VERSION` (`[github] api_version`): `X-GitHub-Api-Version`, a date.
    public static let apiVersion = ClientSetting(client: name, key: "api_version") { text in
        text.range(of: #"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"#, options: .regularExpression) != nil
            ? nil : "'\(text)' is not a GitHub API version; accepted: a date such as 2022-11-28"
    }
    /// `APIMACRO_GITHUB_GRAPHQL_URL` (`[github] graphql_url`): the GraphQL endpoint, when it is
    /// not where the base URL implies.
    public static let graphQLURL = ClientSetting.url(client: name, key: "graphql_url")

    /// GitHub for `auth status`, `config.toml` and the setting checks: the token from
    /// `APIMACRO_GITHUB_TOKEN`, else `GITHUB_TOKEN`, else where `gh` keeps it for the base URL's
    /// host (`GitHubCLI`: `GH_TOKEN`, the enterprise variables, `hosts.yml`, `gh auth token`,
    /// the last two read on first use); no login.
    public static let descriptor = ClientDescriptor(
        name: name, settings: [url, token, apiVersion, graphQLURL],
        credentialSources: [.variable(token.variable), .variable("GITHUB_TOKEN")] + GitHubCLI.sources)
}
