import Foundation
import PluginHost

/// The built-in clients.
///
/// Adding one is its router and client (in `Sources/Clients`), its binding (in
/// `Bindings/`) and one entry here: the module, `login`, `auth status`, `config.toml`,
/// the REPL and the plugins' reserved names all read this list.
enum ClientRegistry {
    static let all: [BuiltInClient] = [
        BuiltInClient(
            name: "github", credentialVariables: ["APIMACRO_GITHUB_TOKEN", "GITHUB_TOKEN"], login: nil,
            configKeys: ["url", "token", "api_version"], install: GitHubBinding.install),
        BuiltInClient(
            name: "instagram", credentialVariables: ["APIMACRO_INSTAGRAM_TOKEN"],
            login: .oauthImplicit(flow: { try $0.instagram(storedToken: nil).loginFlow() }),
            configKeys: ["url", "token", "client_id", "redirect_uri", "authorize_url"],
            install: InstagramBinding.install),
        BuiltInClient(
            name: "shortener", credentialVariables: ["APIMACRO_SHORTENER_KEY"],
            login: .pastedKey(label: "your Google API key"),
            configKeys: ["url", "key"], install: ShortenerBinding.install),
        // `apimacro.request`, `get` and `post`: any HTTP API, no credential of its own.
        BuiltInClient(name: "http", credentialVariables: [], login: nil, configKeys: [], install: HTTPBinding.install),
    ]

    /// The entry called `name`, if one is.
    static func named(_ name: String) -> BuiltInClient? {
        all.first { $0.name == name }
    }

    /// The clients `apimacro login` knows, in order.
    static var loginNames: [String] {
        all.filter { $0.login != nil }.map(\.name)
    }

    /// Every built-in client's name: no plugin may take one.
    static var names: Set<String> {
        Set(all.map(\.name))
    }
}

extension PluginRegistry {
    /// The plugins in the settings' plugin folders; none may take a built-in client's name.
    static func load(settings: Settings) -> PluginRegistry {
        load(folders: settings.pluginFolders, reservedNames: ClientRegistry.names)
    }
}
