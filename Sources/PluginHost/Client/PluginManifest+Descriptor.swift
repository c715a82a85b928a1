public import Clients
import WebAPI

extension PluginManifest {
    /// The plugin as `login`, `logout` and `auth status` see it, read the way a built-in
    /// client's descriptor is: its credential from `auth`'s variable, else the stored login
    /// (`apimacro login NAME`: a pasted key, or the OAuth implicit grant).
    ///
    /// Its settings, the keys of its `[NAME]` table in `config.toml`, are the variables it
    /// reads that start with `APIMACRO_<NAME>_` (`configSettings`).
    public var descriptor: ClientDescriptor {
        let settings = configSettings
        switch auth {
        case .none:
            return ClientDescriptor(
                name: name, settings: settings, noLogin: "\(name) needs no credentials; there is nothing to log in to")
        case .queryKey(_, let variable), .headerKey(_, let variable), .bearer(let variable):
            return ClientDescriptor(
                name: name, settings: settings, credentialSources: [.variable(variable), .storedLogin],
                login: .pastedKey(label: "your \(name) key", variable: variable))
        case .basic(let user, let password):
            let both = CredentialSource(name: "env \(user), \(password)", variables: [user, password]) { view in
                view.value(user) == nil ? nil : view.value(password).map(Secret.init)
            }
            return ClientDescriptor(
                name: name, settings: settings, credentialSources: [both],
                noLogin: "\(name) uses HTTP basic auth: set \(user) and \(password); there is nothing to log in to")
        case .oauth2Implicit(let oauth):
            return ClientDescriptor(
                name: name, settings: settings,
                credentialSources: [.variable(environmentPrefix + "_TOKEN"), .storedLogin],
                login: .oauthImplicit(oauthLogin(oauth)))
        }
    }

    /// The OAuth login of an `oauth2_implicit` plugin, built from its manifest.
    private func oauthLogin(_ oauth: PluginAuth.OAuth2Implicit) -> OAuthLogin {
        OAuthLogin(name: name, scope: oauth.scope) { _ in oauth.authorizeURL }
    }

    /// Every variable the plugin reads that a `config.toml` key of its table stands for: its
    /// URL (`[openweather] url`), its credential's variables when they are named
    /// `APIMACRO_<NAME>_<KEY>` (`[openweather] key`), and, with an OAuth login, its token and
    /// the OAuth app's settings; any other key in its table is refused as a typo would be.
    public var configSettings: [ClientSetting] {
        var settings = [ClientSetting.url(client: name, key: "url")]
        var variables: [String] = []
        switch auth {
        case .none: break
        case .queryKey(_, let variable), .headerKey(_, let variable), .bearer(let variable): variables = [variable]
        case .basic(let user, let password): variables = [user, password]
        case .oauth2Implicit(let oauth):
            settings.append(ClientSetting(client: name, key: "token"))
            settings += oauthLogin(oauth).settings
        }
        let prefix = environmentPrefix + "_"
        for variable in variables where variable.hasPrefix(prefix) && variable.count > prefix.count {
            let key = variable.dropFirst(prefix.count).lowercased()
            if !settings.contains(where: { $0.key == key }) { settings.append(ClientSetting(client: name, key: key)) }
        }
        return settings
    }
}
