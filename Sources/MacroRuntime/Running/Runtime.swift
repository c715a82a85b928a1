import Clients
import Platform
import PluginHost
import WebAPI

/// The services every macro in this process shares: one transport (one
/// connection pool), one exchange log, the redactor, the stored credentials and
/// the plugins' clients.
///
/// Built once from the settings and passed down explicitly; each built-in
/// client's binding builds its client on it (`ClientRegistry`).
final class Runtime: Sendable {
    let settings: Settings
    /// The network: one connection pool for the process, built on the first request that needs it.
    let network: LazyNetwork
    /// What clients send through: the cache, `--record`, `--replay`, `--offline` in front of `network`.
    let transport: ExchangeStore
    let log: ExchangeLog
    let redactor: Redactor
    /// The redactor for what apimacro prints itself, which also learns secrets handed over later.
    let secrets: SecretRegistry
    /// The tokens `apimacro login` stored for the built-in clients that read one, by name.
    let storedTokens: [String: Secret]
    /// The label of the stored account each of those tokens belongs to, by name.
    let storedAccounts: [String: String]
    /// Tokens saved by `apimacro login` (mode 0600 under `$APIMACRO_HOME`).
    let credentials: CredentialStore
    /// Why the stored tokens could not be read, if they could not.
    let credentialProblem: APIError?
    /// The plugins found in the plugin folders (and those that failed to load).
    let plugins: PluginRegistry
    /// One client per loaded plugin, on the shared transport.
    let pluginClients: [PluginClient]

    /// Whether `-v` lines print now (the REPL's `:verbose` turns it on and off).
    let verbosity: VerboseSwitch
    /// The progress line of long paginations and `map`, if any (`MacroHost` decides).
    let progress: ProgressLine?
    /// The running macro's state and the rows it writes (`apimacro.state`, `output(to=)`).
    let store: StoreSession

    /// `progress` is the progress line long paginations and `map` update, if any.
    ///
    /// - Throws: `APIError` (a usage error) when the `--replay` file cannot be read.
    ///
    /// `tokens` stand in for stored tokens, by client name (`login` asks whose a new token is).
    init(
        settings: Settings, warn: @escaping @Sendable (String) -> Void = MacroHost.standardError,
        progress: ProgressLine? = nil, tokens: [String: Secret] = [:]
    ) throws {
        self.settings = settings
        store = StoreSession(settings: settings)
        let verbosity = VerboseSwitch(on: settings.verbose)
        self.verbosity = verbosity
        self.progress = progress
        log =
            settings.verbose || settings.switchableVerbose
            ? ExchangeLog(printsWhile: { verbosity.isOn }, full: settings.fullExchanges) : ExchangeLog()
        let store = settings.credentialStore(chosen: settings.accounts)
        credentials = store
        let registry = PluginRegistry.load(settings: settings)
        // An account chosen for this run (`--account`, APIMACRO_<NAME>_ACCOUNT) must exist: said
        // before anything runs, with the labels there are.
        for (name, label) in settings.accounts.sorted(by: { $0.key < $1.key }) where tokens[name] == nil {
            let known =
                BuiltInClients.descriptors.filter(\.readsStoredLogin).map(\.name)
                + registry.plugins.filter { $0.auth != .none }.map(\.name)
            guard known.contains(name) else {
                throw MacroError(
                    "--account \(name)=\(label) (or APIMACRO_\(name.uppercased())_ACCOUNT): no client called \(name) "
                        + "keeps accounts; those that do: \(known.joined(separator: ", "))")
            }
            _ = try store.entry(for: name)
        }
        var problem: APIError?
        var labels: [String: String] = [:]
        func stored(_ name: String) -> Secret? {
            if let token = tokens[name] { return token }
            do {
                let entry = try store.entry(for: name)
                labels[name] = entry?.account
                return entry?.token
            } catch let error as APIError {
                // A token the keyring would not give: said at once, or the run would go on without it.
                if CredentialStore.isKeyringProblem(error) { warn("apimacro: warning: \(error.message)") }
                problem = problem ?? error
            } catch {
                problem = problem ?? APIError(.auth, "cannot read \(store.path.path): \(SystemErrorText.reason(error))")
            }
            return nil
        }
        let environment = settings.environment
        plugins = registry
        let pluginTokens = registry.plugins.map { $0.auth == .none ? nil : stored($0.name) }
        // A plugin's key may sit in a variable of any name: redact it in tracebacks and error
        // attributes too, in every form it takes on the wire (a basic password's base64 as well).
        let pluginSecrets = zip(registry.plugins, pluginTokens).flatMap { manifest, token in
            PluginCredential(manifest: manifest, environment: environment, storedToken: token).credential?.wireForms
                ?? []
        }
        // Tokens saved by `apimacro login` are secrets like those from the environment.
        var builtInTokens: [String: Secret] = [:]
        for client in BuiltInClients.descriptors where client.readsStoredLogin {
            builtInTokens[client.name] = stored(client.name)
        }
        storedTokens = builtInTokens
        storedAccounts = labels
        // Every account's token and refresh token (a GitHub App's user token) is redacted too:
        // `as_account` may use any of them.
        let everyAccount = ((try? store.names()) ?? []).flatMap { name in
            ((try? store.entries(for: name)) ?? []).flatMap {
                [$0.token.revealed] + ($0.refreshToken.map { [$0.revealed] } ?? [])
            }
        }
        let storedSecrets =
            builtInTokens.values.map(\.revealed) + pluginTokens.compactMap { $0?.revealed } + everyAccount
            + tokens.values.map(\.revealed)
        redactor = Redactor(secrets: settings.secrets + pluginSecrets + storedSecrets)
        secrets = SecretRegistry(
            redactor, journal: settings.learnedSecretsFile.map { LearnedSecrets(file: $0) },
            parentKnows: settings.secrets + storedSecrets)
        // Read first: an unreadable file is a usage error, before any connection pool exists.
        let replay = try settings.replay.map { try HARReplay(file: $0) }
        // Likewise a --record file that could not be written at the end: before anything runs.
        if let record = settings.record { try HARRecorder.checkWritable(record) }
        // Made by the first request that reaches the network: a made-up short token is said then, once.
        let shortSecrets = ShortSecrets.warnings(settings: settings, plugins: registry.plugins)
        network = LazyNetwork {
            for line in shortSecrets { warn(line) }
            return CurlTransport(
                userAgent: "apimacro/\(ApimacroModule.version)", network: settings.network,
                caller: PythonTransferCaller.current)
        }
        let shared = try Runtime.sharedState(settings: settings, replay: replay, warn: warn)
        transport = Runtime.exchangeStore(
            settings: settings, network: network, replay: replay, shared: shared, warn: warn)
        var clients: [PluginClient] = []
        for (manifest, token) in zip(registry.plugins, pluginTokens) {
            clients.append(
                PluginClient(
                    manifest: manifest, environment: environment, storedToken: token,
                    account: labels[manifest.name], prefersStored: settings.accounts[manifest.name] != nil,
                    transport: transport, log: log, redactor: redactor, timeout: settings.requestTimeout,
                    maxWait: settings.maxWait))
        }
        pluginClients = clients
        credentialProblem = problem
    }

    /// What each built-in client is built on (`store`: the stored credentials, or one account of them).
    func clientContext(store: CredentialStore? = nil) -> ClientContext {
        let secrets = self.secrets
        return ClientContext(
            transport: transport, log: log, redactor: redactor, store: store ?? credentials,
            network: settings.offline ? nil : network, warn: transport.warn, learned: { secrets.add($0) })
    }

    /// What the client `descriptor` describes reads its configuration from: the settings, and
    /// the credential `apimacro login` stored for it.
    func view(of descriptor: ClientDescriptor) -> SettingsView {
        var view = settings.view(storedCredential: storedTokens[descriptor.name])
        view.account = storedAccounts[descriptor.name]
        view.prefersStored = settings.accounts[descriptor.name] != nil
        return view
    }

    /// What the client `descriptor` describes reads with the stored account `label` (`as_account`):
    /// the view, whose stored credential wins over the environment's, and the store with
    /// `label` chosen (a refreshed token goes back to that account).
    ///
    /// - Throws: `APIError` when `label` names no stored account of the client (listing those there are).
    func view(of descriptor: ClientDescriptor, account label: String) throws -> (SettingsView, CredentialStore) {
        let (entry, store) = try account(label, of: descriptor.name)
        var view = settings.view(storedCredential: entry.token)
        view.account = entry.account
        view.prefersStored = true
        return (view, store)
    }

    /// The stored account `label` of the client `name`, and the store choosing it.
    ///
    /// - Throws: `APIError` for a label that is none, or names no stored account of `name`.
    func account(_ label: String, of name: String) throws -> (CredentialStore.Entry, CredentialStore) {
        guard CredentialStore.isLabel(label) else {
            throw APIError(
                .invalidRequest,
                "as_account('\(label)'): not an account label; apimacro auth status lists the accounts stored")
        }
        let store = credentials.choosing(label, for: name)
        guard let entry = try store.entry(for: name) else {
            throw APIError(.auth, "no \(name) account labelled '\(label)'; run: apimacro auth status")
        }
        return (entry, store)
    }

    /// The cache (unless `--no-cache` or `--replay`), the recorder and the replay file the settings ask for.
    static func exchangeStore(
        settings: Settings, network: LazyNetwork, replay: HARReplay?, shared: SharedState? = nil,
        warn: @escaping @Sendable (String) -> Void
    ) -> ExchangeStore {
        var cache: HTTPCache?
        if settings.useCache, replay == nil {
            do {
                // Opened by the first cacheable request: an empty macro never opens SQLite.
                cache = HTTPCache(
                    openingOnFirstUse: settings.cacheDirectory, secret: try CacheSecret(folder: settings.home))
            } catch {
                warn(
                    "apimacro: warning: cannot open the HTTP cache in \(settings.cacheDirectory.path) (\(SystemErrorText.reason(error))); continuing without it"
                )
            }
        }
        let recorder = settings.record.map { HARRecorder(file: $0, version: ApimacroModule.version) }
        return ExchangeStore(
            network: network, cache: cache, recorder: recorder, replay: replay, offline: settings.offline,
            shared: shared,
            limits: settings.governorLimits, clientLimits: settings.clientLimits, warn: warn,
            staleIfError: settings.staleIfError)
    }

    /// The Redis connection of `APIMACRO_SHARED_STATE`, tried once now (nil when the setting is
    /// absent, or nothing is sent: `--replay`, `--offline`).
    ///
    /// An address the server rejects is a usage error; a server that does not answer is a
    /// warning, and the run goes on without it.
    static func sharedState(
        settings: Settings, replay: HARReplay?, warn: @escaping @Sendable (String) -> Void
    ) throws -> SharedState? {
        guard let address = settings.sharedState, replay == nil, !settings.offline else { return nil }
        let shared = SharedState(
            address: address, source: settings.sharedStateSource, timeout: settings.sharedStateTimeout, warn: warn,
            caller: PythonTransferCaller.current)
        try shared.connect()
        return shared
    }

    /// Writes the `--record` file, if any (the runner calls it however the macro ended); false
    /// when it could not be written (the reason is on stderr, and the run must not exit 0).
    @discardableResult
    func writeRecording() -> Bool {
        guard let recorder = transport.recorder else { return true }
        do {
            try recorder.write()
            return true
        } catch {
            MacroHost.standardError("apimacro: \(SystemErrorText.describe(error))")
            return false
        }
    }
}
