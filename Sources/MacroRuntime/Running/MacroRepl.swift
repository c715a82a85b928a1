public import Platform
import PythonBridge
import Store
import WebAPI

/// `apimacro repl`: CPython's interactive console (`apimacro._repl`, a
/// `code.InteractiveConsole` with readline and rlcompleter) in the embedded
/// interpreter.
///
/// The `:` commands that need the host call the native module `_apimacro_repl`
/// built here: `run` and `child_run`, `macros`, `login` and `login_url`, `verbose`.
public struct MacroRepl {
    let host: MacroHost
    /// The session's options a macro run in a child process takes too (`--replay FILE`,
    /// `--offline`, …; not `--record`, whose file is the session's, nor `--format` and `-v`,
    /// which `:format` and `:verbose` may have changed).
    let childOptions: [String]
    /// Where `:run WORDS` runs: nil in this process, else the name of the macro a child
    /// process runs as `apimacro run` would (WORDS hold `run`'s own options).
    let childMacro: @Sendable ([String]) -> String?

    /// A REPL on `host` (build the host with `settings.switchableVerbose` for `:verbose`);
    /// `childMacro` tells which `:run` lines take `run`'s options, and so run in a child process
    /// given the session's `childOptions` first.
    public init(
        host: MacroHost, childOptions: [String] = [],
        childMacro: @escaping @Sendable ([String]) -> String? = { _ in nil }
    ) {
        self.host = host
        self.childOptions = childOptions
        self.childMacro = childMacro
    }

    /// The history file: `$APIMACRO_HOME/history` (mode 0600).
    public var historyFile: URL { host.settings.home.appendingPathComponent("history") }

    /// Runs the console until Ctrl-D, `:quit` or `exit()` and returns the exit
    /// status.
    ///
    /// On a terminal the session prompts and edits lines; otherwise it reads
    /// lines from stdin with no prompt (and exits 1 when one failed).
    ///
    /// Call on the main thread (Python delivers Ctrl-C there).
    public func run() throws -> Int32 {
        let interactive = isatty(STDIN_FILENO) == 1
        return try withGIL {
            do {
                let native = try nativeModule()
                // State with --state-key NAME, committed when the session ends with status 0.
                host.runtime.store.begin(key: host.settings.stateKey)
                let console = try Interpreter.import("apimacro._repl")
                let status = try console.callMethod(
                    "main", [native.object, PyRef(string: historyFile.path), PyRef.bool(interactive)])
                Interpreter.flushStandardStreams()
                var ending = ExitReport.success
                if case .int(let value) = try PythonValue(python: status) {
                    ending = .status(Int32(truncatingIfNeeded: value))
                }
                if ending.exitCode == ExitReport.success.exitCode, !commitState() { ending = .failure() }
                host.runtime.store.end()
                // The --record file holds the whole session; one that cannot be written fails it.
                if !host.runtime.writeRecording(), ending.exitCode == ExitReport.success.exitCode {
                    ending = .failure()
                }
                return ending.exitCode
            } catch is PythonErrorSet {
                let failure = PythonException.fetch()?.description ?? "unknown error"
                throw MacroError("cannot start the REPL: \(failure)")
            }
        }
    }

    /// `_apimacro_repl`: the host side of the `:` commands (GIL held).
    ///
    /// Commits the session's state and rows; false (the reason on stderr) when they could not be written.
    private func commitState() -> Bool {
        do {
            if let loaded = try Interpreter.import("sys").attribute("modules").item("apimacro._store") {
                _ = try loaded.callMethod("finish")
            }
            let store = host.runtime.store
            guard !store.isEmpty else { return true }
            _ = try withoutGIL { try store.commit() }
            return true
        } catch is PythonErrorSet {
            let failure = PythonException.fetch()?.description ?? "unknown error"
            MacroHost.standardError("apimacro: the session's state was not saved: \(failure)")
        } catch {
            MacroHost.standardError("apimacro: the session's state was not saved: \(error)")
        }
        return false
    }

    private func nativeModule() throws -> NativeModule {
        let module = try NativeModule(name: "_apimacro_repl", doc: "Host side of the REPL's : commands.")
        let host = self.host
        try module.addFunction("run", doc: "run(macro, args) -> exit status: runs a macro as `apimacro run` would.") {
            arguments in
            let slots = try arguments.bind("run", ["macro", "args"], required: 2)
            let name = try String(pythonString: slots[0] ?? .none)
            guard case .list(let items) = try PythonValue(python: slots[1] ?? .none) else {
                throw ArgumentError("run() needs a list of arguments")
            }
            let words = items.compactMap { item -> String? in
                if case .string(let word) = item { return word }
                return nil
            }
            let runner = MacroRunner(host: host, inSession: true)
            let status: Int32
            do {
                let file = try MacroLocator(settings: host.settings).locate(
                    name, relativeTo: URL(fileURLWithPath: FileManager.default.currentDirectoryPath))
                status = try runner.run(file: file, arguments: words, name: name)
            } catch let error as MacroError {
                let ending = ExitReport(error)
                if let message = ending.message { runner.writeError(message) }
                status = ending.exitCode
            }
            return try PythonValue.int(Int(status)).toPython()
        }
        let childOptions = self.childOptions
        let childMacro = self.childMacro
        try module.addFunction(
            "child_run",
            doc: "child_run(words, format) -> (argv, macro) for a :run line that takes run's options, else None."
        ) { arguments in
            let slots = try arguments.bind("child_run", ["words", "format"], required: 2)
            guard case .list(let items) = try PythonValue(python: slots[0] ?? .none) else {
                throw ArgumentError("child_run() needs a list of words")
            }
            let words = items.compactMap { item -> String? in
                if case .string(let word) = item { return word }
                return nil
            }
            guard let macro = childMacro(words) else { return .none }
            // The session's options, then its current :format and :verbose, then the line's own (which win).
            var argv = [PythonPackage.executable.path, "run"] + childOptions
            if case .string(let format) = try PythonValue(python: slots[1] ?? .none) { argv += ["--format", format] }
            if host.runtime.verbosity.isOn { argv.append(host.runtime.settings.fullExchanges ? "-vv" : "--verbose") }
            return try PythonValue.tuple([.list((argv + words).map { .string($0) }), .string(macro)]).toPython()
        }
        try module.addFunction("macros", doc: "macros() -> [(name, help, path)] on the macro path.") { _ in
            let entries = try MacroCatalog(settings: host.settings).entries().filter { !$0.shadowed }
            return try PythonValue.list(
                entries.map { .tuple([.string($0.name), .string($0.help), .string($0.path)]) }
            ).toPython()
        }
        try module.addFunction(
            "login",
            doc: "login(name, value, redirect=False): stores a key read by the REPL (shortener, a plugin's), or with "
                + "redirect completes login_url's OAuth login with the address the browser was sent to."
        ) { arguments in
            let slots = try arguments.bind("login", ["name", "value", "redirect"], required: 2)
            let name = try String(pythonString: slots[0] ?? .none)
            let value = try String(pythonString: slots[1] ?? .none)
            let redirect = try PythonValue(python: slots[2] ?? .none) == .bool(true)
            let settings = host.settings
            Interpreter.flushStandardStreams()
            try withoutGIL {
                try await Logins(settings: settings).login(
                    name, mode: redirect ? .redirectURL(value) : .paste,
                    say: { line in
                        // The REPL has asked for the key already: skip the login's own prompt.
                        guard !line.hasSuffix(":") else { return }
                        StandardStreams.output(line + "\n")
                    },
                    prompt: { value })
            }
            return .none
        }
        try module.addFunction(
            "login_url", doc: "login_url(name) -> the authorize URL of a plugin's OAuth login (its state saved)."
        ) { arguments in
            let slots = try arguments.bind("login_url", ["name"], required: 1)
            return try PyRef(
                string: Logins(settings: host.settings).authorizationURL(for: String(pythonString: slots[0] ?? .none)))
        }
        try module.addFunction(
            "redact", doc: "redact(text) -> text with every secret apimacro knows replaced by REDACTED."
        ) {
            arguments in
            let slots = try arguments.bind("redact", ["text"], required: 1)
            return try PyRef(string: host.redactor.redact(try String(pythonString: slots[0] ?? .none)))
        }
        try module.addFunction("verbose", doc: "verbose(on): turns the -v lines on or off.") { arguments in
            let slots = try arguments.bind("verbose", ["on"], required: 1)
            guard case .bool(let on) = try PythonValue(python: slots[0] ?? .none) else {
                throw ArgumentError("verbose() needs True or False")
            }
            host.runtime.verbosity.isOn = on
            return .none
        }
        try module.register()
        return module
    }
}
