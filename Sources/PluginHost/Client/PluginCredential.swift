import Clients
public import WebAPI

/// A plugin's credential as resolved from the environment and the stored
/// logins, with where it came from and how to provide it when it is missing.
public struct PluginCredential: Sendable {
    /// What the pipeline sends, or nil when there is none.
    public let credential: Credential?
    /// Where it came from (`env APIMACRO_OPENWEATHER_KEY`, `stored login`), for `auth status`.
    public let source: String?
    /// How to provide one (`set APIMACRO_OPENWEATHER_KEY`), or nil when the plugin needs none.
    public let hint: String?
    /// Whether the credential is the stored token.
    public var fromStore: Bool { source == "stored key" || source == "stored login" }

    /// Environment variables win over a token stored by `apimacro login NAME`.
    ///
    /// With `prefersStored` (an account chosen by `--account` or `as_account`), the stored token wins.
    public init(
        manifest: PluginManifest, environment: [String: String], storedToken: Secret?, prefersStored: Bool = false
    ) {
        func env(_ name: String) -> Secret? {
            prefersStored && storedToken != nil ? nil : environment[name].flatMap { $0.isEmpty ? nil : Secret($0) }
        }
        let login = "apimacro login \(manifest.name)"
        func keyed(_ variable: String, _ make: (Secret) -> Credential) -> (Credential?, String?, String?) {
            if let value = env(variable) { return (make(value), "env \(variable)", nil) }
            return (
                storedToken.map(make), storedToken == nil ? nil : "stored key",
                "set \(variable) (or run \(login) to store a key)"
            )
        }
        let resolved: (Credential?, String?, String?)
        switch manifest.auth {
        case .none:
            resolved = (nil, nil, nil)
        case .queryKey(let param, let variable):
            resolved = keyed(variable) { .query(name: param, value: $0) }
        case .headerKey(let header, let variable):
            resolved = keyed(variable) { .header(name: header, value: $0) }
        case .bearer(let variable):
            resolved = keyed(variable) { .bearer($0) }
        case .basic(let userVariable, let variable):
            let user = environment[userVariable].flatMap { $0.isEmpty ? nil : $0 }
            if let user, let password = env(variable) {
                resolved = (.basic(user: user, password: password), "env \(userVariable), \(variable)", nil)
            } else {
                resolved = (nil, nil, "set \(userVariable) and \(variable)")
            }
        case .oauth2Implicit(let settings):
            let variable = manifest.environmentPrefix + "_TOKEN"
            let make: (Secret) -> Credential = { token in
                settings.param.map { .query(name: $0, value: token) } ?? .bearer(token)
            }
            if let token = env(variable) {
                resolved = (make(token), "env \(variable)", nil)
            } else {
                resolved = (
                    storedToken.map(make), storedToken == nil ? nil : "stored login",
                    "run \(login) (or set \(variable))"
                )
            }
        }
        (credential, source, hint) = resolved
    }
}
