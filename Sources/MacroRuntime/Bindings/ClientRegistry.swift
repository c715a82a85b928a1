import Clients
import Foundation
import PluginHost

/// The built-in clients.
///
/// Adding one is its folder in `Sources/Clients` (its descriptor, configuration, router,
/// client and factory), its binding here in `Bindings/`, and one line below: the module, `login`,
/// `logout`, `auth status`, `config.toml`'s keys, the settings' checks, the REPL, the help
/// texts and the plugins' reserved names all read this list.
enum ClientRegistry {
    static let all: [BuiltInClient] = [
        BuiltInClient(GitHub.descriptor, install: GitHubBinding.install) { GitHub.client(in: $0, on: $1) },
        BuiltInClient(Instagram.descriptor, install: InstagramBinding.install) {
            Instagram.client(in: $0, on: $1).built
        },
        BuiltInClient(Shortener.descriptor, install: ShortenerBinding.install) { Shortener.client(in: $0, on: $1) },
        // `apimacro.request`, `get` and `post`: any HTTP API, no credential of its own.
        BuiltInClient(
            ClientDescriptor(name: "http"), isObject: false, install: HTTPBinding.install, api: ApiTarget.plain),
    ]

    /// The entry called `name`, if one is.
    static func named(_ name: String) -> BuiltInClient? {
        all.first { $0.name == name }
    }

    /// The clients `apimacro login` knows, in order.
    static var loginNames: [String] {
        all.filter { $0.descriptor.login != nil }.map(\.name)
    }

    /// The clients that are objects in `apimacro` (`github`, …), in order.
    static var objectNames: [String] {
        all.filter(\.isObject).map(\.name)
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
