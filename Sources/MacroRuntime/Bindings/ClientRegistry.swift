import Clients
import Platform
import PluginHost

/// The built-in clients with their Python faces: each entry of `BuiltInClients` (which
/// clients exist, declared in `Sources/Clients`) with the binding that makes `apimacro.NAME`.
///
/// A new client is its folder in `Sources/Clients`, its line in `BuiltInClients.all`, its
/// binding here in `Bindings/` and its case below.
enum ClientRegistry {
    static let all: [BuiltInClient] = BuiltInClients.all.map(withBinding)

    /// `entry` with its binding.
    static func withBinding(_ entry: BuiltInClients.Entry) -> BuiltInClient {
        switch entry.name {
        case GitHub.name: BuiltInClient(entry, className: "GitHub", install: GitHubBinding.install)
        case Instagram.name: BuiltInClient(entry, className: "Instagram", install: InstagramBinding.install)
        case Shortener.name: BuiltInClient(entry, className: "Shortener", install: ShortenerBinding.install)
        // `apimacro.request`, `get` and `post`: functions, not an object.
        case BuiltInClients.http.name:
            BuiltInClient(entry, isObject: false, install: HTTPBinding.install, api: ApiTarget.plain)
        default: preconditionFailure("BuiltInClients lists \(entry.name), which has no binding in ClientRegistry")
        }
    }

    /// The entry called `name`, if one is.
    static func named(_ name: String) -> BuiltInClient? {
        all.first { $0.name == name }
    }

    /// The clients `apimacro login` knows, in order.
    static var loginNames: [String] { BuiltInClients.loginNames }

    /// The clients that are objects in `apimacro` (`github`, …), in order.
    static var objectNames: [String] {
        all.filter(\.isObject).map(\.name)
    }

    /// Every built-in client's name: no plugin may take one.
    static var names: Set<String> { BuiltInClients.names }
}

extension PluginRegistry {
    /// The plugins in the settings' plugin folders; none may take a built-in client's name.
    static func load(settings: Settings) -> PluginRegistry {
        load(folders: settings.pluginFolders, reservedNames: BuiltInClients.names)
    }
}
