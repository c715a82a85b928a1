import Clients
import PluginHost
import PythonBridge
import WebAPI

/// The native module `_apimacro`: what the bundled `apimacro` package
/// re-exports.
///
/// Later issues add the HTTP clients here.
enum ApimacroModule {
    /// The version apimacro reports (`apimacro --version`, `User-Agent`).
    static let version = "0.1.0"

    /// What `_native_exceptions.py` defines: the exception classes and the Graph API's helpers.
    static let exceptionNames = [
        "APIError", "NetworkError", "Timeout", "HTTPError", "NotFound", "Unauthorized", "Forbidden", "RateLimited",
        "ParseError", "AuthError", "OfflineError", "GraphQLError", "GraphAPIError", "MacroTimeout",
        "_graph_classes", "_graph_class", "_graph_error",
    ]

    /// What `_native_helpers.py` and the clients that are no object (`http`) define.
    static let helperNames = ["Headers", "get", "post", "_map_threads", "request", "Response"]

    /// Builds `_apimacro` and registers it in `sys.modules` (GIL held).
    static func install(settings: Settings, runtime: Runtime) throws -> NativeModule {
        let module = try NativeModule(
            name: "_apimacro",
            doc: "Native half of apimacro: exceptions, clients and helpers. Import `apimacro` instead.")
        try module.set("__version__", PyRef(string: version))
        try module.set("default_format", settings.format.map { try PyRef(string: $0.rawValue) } ?? .none)
        // How `apimacro.output` colours and fits tables (`_output.py`): auto, always or never
        // (NO_COLOR and a dumb terminal already folded in), and `--wide`.
        try module.set("color", PyRef(string: settings.color.rawValue))
        try module.set("wide", PyRef.bool(settings.wide))
        try ErrorRedaction.install(in: module, secrets: runtime.secrets)
        // pytest leaves out of its tracebacks the frames whose globals say so: every function of
        // `_apimacro`'s namespace is apimacro's own (`_native_helpers.py` says it too).
        try module.set("__tracebackhide__", .bool(true))
        let decoder = JSONDecoding()
        let parallel = ParallelMethods()
        let iterators = try PageIteratorClass.make(progress: runtime.progress.map { ($0, runtime.log) })
        let context = BuiltInClient.Context(
            module: module, runtime: runtime, decoder: decoder, iterators: iterators, parallel: parallel)
        // The client objects, their classes and the plugins are built the first time a macro
        // reads one (`from apimacro import github`, `apimacro.plugins`): a macro that uses none
        // pays for none. `dir()`, `help()` and the REPL see every name from the start.
        var lazy: [NativeModule.LazyGroup] = [
            // The exception classes of SPEC §3 (they use `_redact`): made by the first read of
            // one, as `except apimacro.NotFound` and a native call raising one do (1.3 M
            // instructions for the fourteen classes, which a macro that fails nothing never needs).
            NativeModule.LazyGroup(names: exceptionNames) {
                try module.exec(PythonPackage.source("_native_exceptions.py"))
            }
        ]
        // `request` and `Response` (the `http` client's face), with the small Python helpers:
        // `get`, `post` (which call `request`), `Headers` and `map`'s `_map_threads`.
        let plain = ClientRegistry.all.filter { $0.className == nil }
        lazy.append(
            NativeModule.LazyGroup(names: helperNames) {
                try module.exec(PythonPackage.source("_native_helpers.py"))
                for client in plain { try client.install(context) }
            })
        for client in ClientRegistry.all {
            guard let className = client.className else { continue }
            lazy.append(
                NativeModule.LazyGroup(names: [client.name, className]) {
                    // Its Python helpers name the exception classes as globals (GraphQL's).
                    _ = try module.object.attribute(exceptionNames[0])
                    try client.install(context)
                    // The client's class under its name (`apimacro.GitHub`, as `type(github)` says
                    // and the type stubs declare it), for annotations and isinstance.
                    let type = try module.object.attribute(client.name).attribute("__class__")
                    let built = try String(pythonString: type.attribute("__name__"))
                    guard built == className else {
                        throw MacroError(
                            "apimacro.\(client.name)'s class is \(built), not \(className) as ClientRegistry says")
                    }
                    try module.set(className, type)
                })
        }
        lazy.append(
            NativeModule.LazyGroup(names: PluginBinding.names) {
                _ = try module.object.attribute(exceptionNames[0])
                try PluginBinding.install(in: module, runtime: runtime, decoder: decoder, iterators: iterators)
            })
        try module.setLazy(lazy)
        if let iteratorType = iterators.type { try module.set("PageIterator", iteratorType) }
        // What the REPL's namespace and `:login` read: the built-in clients, and how each client
        // with a login logs in, the plugins' too (the names `apimacro login` takes).
        try module.set("_builtin_clients", PythonValue.list(ClientRegistry.objectNames.map { .string($0) }).toPython())
        let descriptors = BuiltInClients.descriptors + runtime.plugins.plugins.map(\.descriptor)
        try module.set(
            "_logins",
            PythonValue.object(
                descriptors.compactMap { client in client.login.map { (client.name, .string($0.kind)) } }
            )
            .toPython())
        try ParallelMap.install(in: module, parallel: parallel, decoder: decoder)
        try StoreBinding.install(
            in: module, session: runtime.store, workingDirectory: settings.workingDirectory,
            warn: MacroHost.standardError)
        if let progress = runtime.progress {
            ParallelMap.showProgress(parallel: parallel, progress: progress, log: runtime.log)
            // What the macro writes erases the line first (`_terminal.py`).
            try module.addFunction("_progress_erase", doc: "Erases the progress line, if it is shown.") { _ in
                progress.erase()
                return .none
            }
        }
        try module.addFunction(
            "sleep",
            doc: "sleep(seconds)\n\nWaits without holding the GIL; Ctrl-C and the macro timeout interrupt it."
        ) { arguments in
            let slots = try arguments.bind("sleep", ["seconds"], required: 1)
            // Checked as `time.sleep` checks it: 1e300 (or a server's huge retry_after) is an
            // OverflowError, never a trap in the conversion to a `Duration` (issue 24).
            let what = "sleep() argument 'seconds'"
            let seconds = try Arguments.span(Arguments.number(slots[0] ?? .none, what), what)
            try withoutGIL { try await Task.sleep(for: Seconds.duration(seconds)) }
            return .none
        }
        try module.register()
        return module
    }
}
