import Foundation
import WebAPI

/// `apimacro auth status --check` for GitHub: who the token belongs to, as `gh auth status`
/// shows it.
///
/// A token: `GET /user` gives the login, its `X-OAuth-Scopes` header a classic token's scopes
/// (a fine-grained token has none), and `GitHub-Authentication-Token-Expiration` an expiring
/// token's end (https://docs.github.com/rest/users/users#get-the-authenticated-user). A GitHub
/// App: its installation token is minted as for a macro, and `GET /installation/repositories`
/// tells how many repositories it reaches
/// (https://docs.github.com/rest/apps/installations#list-repositories-accessible-to-the-app-installation).
/// The token itself is never part of the answer.
public enum GitHubIdentity {
    /// The check.
    public static let check = IdentityCheck { view, context in
        let configuration = GitHubConfiguration(view)
        let client = GitHubClient(
            configuration: configuration, transport: context.transport, log: context.log, redactor: context.redactor,
            warn: context.warn, appNetwork: context.transport)
        if let app = client.appAuth {
            let response = try await client.api.send(
                Request("GET", "/installation/repositories", query: [("per_page", "1")]))
            let total = JSONPath.value(in: response.body, path: ["total_count"]) as? Int
            let known = app.known
            var line =
                "GitHub App \(app.app.appID ?? "?"), installation \(known.installationID.map(String.init) ?? "?")"
            if let account = known.account { line += " (\(account))" }
            if let total { line += ": \(total) \(total == 1 ? "repository" : "repositories")" }
            if let expiresAt = known.expiresAt { line += "; token expires \(GitHubTokenExpiry.format(expiresAt))" }
            return line
        }
        guard client.hasToken else { return "no token to check" }
        let response = try await client.send(.get(path: "/user", parameters: [], headers: []))
        return describe(response)
    }

    /// The line for an answer to `GET /user`.
    static func describe(_ response: Response) -> String {
        let login = JSONPath.string(in: response.body, path: ["login"]) ?? "?"
        var line = "logged in as \(login)"
        if let scopes = response.headers["x-oauth-scopes"] {
            let list = scopes.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { !$0.isEmpty }
            line += list.isEmpty ? "; no scopes" : "; scopes: \(list.joined(separator: ", "))"
        } else {
            line += "; no scopes header (a fine-grained token or an App's)"
        }
        if let expiry = response.headers["github-authentication-token-expiration"].flatMap(GitHubTokenExpiry.parse) {
            line += "; expires \(GitHubTokenExpiry.format(expiry))"
        }
        return line
    }
}
