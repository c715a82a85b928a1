/// The built-in clients: which there are, in order, each as its folder declares it (its
/// descriptor and its factory).
///
/// Adding one is its folder in `Sources/Clients` and one line below, plus its Python face in
/// MacroRuntime's `Bindings/` (named in `ClientRegistry`): `login`, `logout`, `auth status`,
/// `config.toml`'s keys, the settings' checks, the help texts, `apimacro api` and the names
/// plugins may not take all read this list.
public enum BuiltInClients {
    /// One built-in client: its description and how it is made.
    public struct Entry: Sendable {
        /// Its name, settings, credential sources and login.
        public let descriptor: ClientDescriptor
        /// Its factory, from the settings and the shared services; nil for `http`, which has
        /// no client of its own.
        public let make: (@Sendable (SettingsView, ClientContext) -> any BuiltClient)?

        /// The client `descriptor` describes, made by `make`.
        init(
            _ descriptor: ClientDescriptor, make: (@Sendable (SettingsView, ClientContext) -> any BuiltClient)? = nil
        ) {
            self.descriptor = descriptor
            self.make = make
        }

        /// The client's name.
        public var name: String { descriptor.name }
    }

    /// `apimacro.request`, `get` and `post`: any HTTP API, no credential and no settings of its own.
    public static let http = ClientDescriptor(name: "http")

    /// Every built-in client, in the order messages and help texts list them.
    public static let all: [Entry] = [
        Entry(GitHub.descriptor) { GitHub.client(in: $0, on: $1) },
        Entry(Instagram.descriptor) { Instagram.client(in: $0, on: $1).built },
        Entry(Shortener.descriptor) { Shortener.client(in: $0, on: $1) },
        Entry(http),
    ]

    /// Their descriptors, in order.
    public static var descriptors: [ClientDescriptor] { all.map(\.descriptor) }

    /// The one called `name`, if one is.
    public static func named(_ name: String) -> Entry? {
        all.first { $0.name == name }
    }

    /// Every built-in client's name: no plugin may take one.
    public static var names: Set<String> { Set(all.map(\.name)) }

    /// The clients `apimacro login` knows, in order.
    public static var loginNames: [String] {
        all.filter { $0.descriptor.login != nil }.map(\.name)
    }
}
