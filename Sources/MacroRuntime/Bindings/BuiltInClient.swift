import Clients
import PythonBridge

/// One built-in client as the rest of apimacro sees it: its name (the object
/// `apimacro.NAME`, the `api` of its errors, a name no plugin may take), where its
/// credential comes from (`auth status`), how `apimacro login NAME` gets one, the
/// keys of its `[NAME]` table in `config.toml`, and how its binding builds it.
///
/// `ClientRegistry.all` lists them all.
struct BuiltInClient: Sendable {
    /// How `apimacro login NAME` (and the REPL's `:login NAME`) gets a credential.
    enum Login: Sendable {
        /// The OAuth 2 implicit grant; the flow is built from the settings.
        case oauthImplicit(flow: @Sendable (Settings) throws -> OAuthImplicitFlow)
        /// A key the user pastes; `label` says what to paste ("your Google API key").
        case pastedKey(label: String)

        /// `oauth2_implicit` or `key`, as the REPL reads it.
        var kind: String {
            switch self {
            case .oauthImplicit: "oauth2_implicit"
            case .pastedKey: "key"
            }
        }
    }

    /// What a binding builds its Python object with.
    struct Context {
        let module: NativeModule
        let runtime: Runtime
        let decoder: JSONDecoding
        let iterators: NativeClass<PageState>
        let parallel: ParallelMethods
    }

    let name: String
    /// The environment variables that hold its credential, in the order they are read.
    let credentialVariables: [String]
    /// How `login` gets a credential; nil when there is no login (the token comes from the environment).
    let login: Login?
    /// The keys of its `[NAME]` table in `config.toml`; empty when it has none.
    let configKeys: [String]
    /// Builds its client on the runtime's shared transport and sets its object in `_apimacro` (GIL held).
    let install: @Sendable (Context) throws -> Void
}
