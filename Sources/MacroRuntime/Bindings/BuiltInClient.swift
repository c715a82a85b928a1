import Clients
import PythonBridge

/// One built-in client in the registry: its entry in `BuiltInClients` (declared in
/// `Sources/Clients`: name, settings, credential sources, login, factory), and how its
/// binding builds it in Python.
///
/// `ClientRegistry.all` lists them all.
struct BuiltInClient: Sendable {
    /// What a binding builds its Python object with.
    struct Context {
        let module: NativeModule
        let runtime: Runtime
        let decoder: JSONDecoding
        let iterators: NativeClass<PageState>
        let parallel: ParallelMethods
    }

    /// The client as `login`, `auth status`, `config.toml` and the setting checks see it.
    let descriptor: ClientDescriptor
    /// Whether the client is the object `apimacro.NAME` (false for `http`, whose face is the
    /// functions `request`, `get` and `post`).
    let isObject: Bool
    /// The object's class, also `apimacro.<className>` (`GitHub`); nil for `http`.
    let className: String?
    /// Builds its client on the runtime's shared transport and sets its object in `_apimacro` (GIL held).
    let install: @Sendable (Context) throws -> Void
    /// Builds its client for `apimacro api` (no Python): nil for a client `api` cannot name.
    let api: (@Sendable (Runtime) -> ApiTarget)?

    /// A registry entry: `entry`'s client, made by its factory (`entry.make`, in `Sources/Clients`)
    /// for `apimacro api` and `auth status --check`, and by its binding's `install` for a macro.
    init(
        _ entry: BuiltInClients.Entry, className: String, install: @escaping @Sendable (Context) throws -> Void
    ) {
        let descriptor = entry.descriptor
        self.descriptor = descriptor
        self.isObject = true
        self.className = className
        self.install = install
        if let make = entry.make {
            self.api = { @Sendable runtime in
                ApiTarget(name: descriptor.name, built: make(runtime.view(of: descriptor), runtime.clientContext()))
            }
        } else {
            self.api = nil
        }
    }

    /// A registry entry that is no client object (`http`): `api` builds it for `apimacro api`.
    init(
        _ entry: BuiltInClients.Entry, isObject: Bool, install: @escaping @Sendable (Context) throws -> Void,
        api: @escaping @Sendable (Runtime) -> ApiTarget
    ) {
        self.descriptor = entry.descriptor
        self.isObject = isObject
        self.className = nil
        self.install = install
        self.api = api
    }

    /// The client's name.
    var name: String { descriptor.name }
}
