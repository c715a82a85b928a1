import Clients
import WebAPI

extension PluginManifest {
    /// The plugin as `login`, `logout` and `auth status` see it, read the way a built-in
    /// client's descriptor is: its credential from `auth`'s variable, else the stored login
    /// (`apimacro login NAME`: a pasted key, or the OAuth implicit grant).
    ///
    /// Its `config.toml` table takes any key, so it declares no settings.
    public var descriptor: ClientDescriptor {
        switch auth {
        case .none:
            return ClientDescriptor(name: name, noLogin: "\(name) needs no credentials; there is nothing to log in to")
        case .queryKey(_, let variable), .headerKey(_, let variable), .bearer(let variable):
            return ClientDescriptor(
                name: name, credentialSources: [.variable(variable), .storedLogin],
                login: .pastedKey(label: "your \(name) key", variable: variable))
        case .basic(let user, let password):
            let both = CredentialSource(name: "env \(user), \(password)") { view in
                view.value(user) == nil ? nil : view.value(password).map(Secret.init)
            }
            return ClientDescriptor(
                name: name, credentialSources: [both],
                noLogin: "\(name) uses HTTP basic auth: set \(user) and \(password); there is nothing to log in to")
        case .oauth2Implicit(let settings):
            let login = OAuthLogin(name: name, scope: settings.scope) { _ in settings.authorizeURL }
            return ClientDescriptor(
                name: name, credentialSources: [.variable(environmentPrefix + "_TOKEN"), .storedLogin],
                login: .oauthImplicit(login))
        }
    }
}
