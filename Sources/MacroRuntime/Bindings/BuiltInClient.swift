import Clients
import PythonBridge

/// One built-in client in the registry: its descriptor (declared in its folder of
/// `Sources/Clients`: name, settings, credential sources, login) and how its binding builds
/// it in Python.
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
    /// Builds its client on the runtime's shared transport and sets its object in `_apimacro` (GIL held).
    let install: @Sendable (Context) throws -> Void
    /// Builds its client for `apimacro api` (no Python): nil for a client `api` cannot name.
    let api: (@Sendable (Runtime) -> ApiTarget)?

    /// A registry entry: `descriptor`'s client, built by `install` (and by `api` for `apimacro api`).
    init(
        _ descriptor: ClientDescriptor, isObject: Bool = true, install: @escaping @Sendable (Context) throws -> Void,
        api: (@Sendable (Runtime) -> ApiTarget)? = nil
    ) {
        self.descriptor = descriptor
        self.isObject = isObject
        self.install = install
        self.api = api
    }

    /// The client's name.
    var name: String { descriptor.name }
}
