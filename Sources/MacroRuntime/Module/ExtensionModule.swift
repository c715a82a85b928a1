import Platform
import PythonBridge
import WebAPI

/// apimacro loaded by another program's Python (`import apimacro` from a plain `python3`, pytest,
/// a notebook kernel): the same `_apimacro` the binary builds, made by the extension module's
/// `PyInit__apimacro` on the host's interpreter.
///
/// The host owns the interpreter and its signals: nothing here installs a handler or prints.
/// Settings come from the environment and `config.toml` as for `apimacro run`; what the run's
/// flags say comes from variables read only here (`APIMACRO_RECORD`, `APIMACRO_REPLAY`,
/// `APIMACRO_OFFLINE`, `APIMACRO_NO_CACHE`, `APIMACRO_STATE_KEY`).
public enum ExtensionModule {
    /// What `PyInit__apimacro` returns: the definition whose create slot builds the module.
    public static func initialize() -> UnsafeMutableRawPointer? {
        NativeExtension.initialize(name: "_apimacro") { build() }
    }

    /// Where a long pagination says how it goes: in a notebook (`apimacro._notebook` loaded
    /// into IPython), a display that `_notebook.progress` updates in place and clears at the end;
    /// else in a terminal, the line `apimacro run` draws; elsewhere nowhere.
    ///
    /// Decided at each redraw, not here: the kernel (`python -m apimacro.kernel`) imports apimacro
    /// before IPython has started.
    static func progressLine(_ settings: Settings) -> ProgressLine {
        let terminal = ProgressLine.forTerminal(settings) != nil
        let notebook: @Sendable (PythonValue) -> Bool = { text in
            withGIL {
                guard let module = try? Interpreter.import("sys").attribute("modules").item("apimacro._notebook"),
                    case .bool(true) = (try? module.attribute("displaying")).flatMap({ try? PythonValue(python: $0) })
                else {
                    PythonRaise.clear()
                    return false
                }
                // A display that cannot be drawn never stops the pagination it reports on.
                if (try? module.callMethod("progress", [text.toPython()])) == nil { PythonRaise.clear() }
                return true
            }
        }
        return ProgressLine(
            width: terminal ? ProgressLine.terminalWidth() : 100,
            show: { line in
                if !notebook(.string(line)), terminal {
                    ProgressLine.standardError("\r\u{1B}[2m\(line)\u{1B}[0m\u{1B}[K")
                }
            },
            clear: {
                if !notebook(.none), terminal { ProgressLine.standardError("\r\u{1B}[K") }
            })
    }

    /// Builds `_apimacro` (GIL held, during its import) and returns it, or nil with `ImportError`
    /// set.
    static func build() -> PyRef? {
        do {
            try Interpreter.attach()
            PythonPackage.folder = try packageFolder()
            let settings = try settingsFromEnvironment()
            let warn: @Sendable (String) -> Void = { line in ExtensionModule.writeStandardError(line) }
            let runtime = try Runtime(settings: settings, warn: warn, progress: progressLine(settings))
            CodeCache.directory = settings.cacheDirectory.appendingPathComponent("bytecode").path
            runtime.store.begin(
                key: settings.stateKey,
                missing: "apimacro.state needs a name for this program's state: set APIMACRO_STATE_KEY=NAME "
                    + "before importing apimacro")
            let module = try ApimacroModule.install(settings: settings, runtime: runtime)
            // The --record file of a run is written when it ends; here, when the program does (and
            // at a notebook's `%apimacro save` or switch, `_notebook.py`).
            try module.addFunction(
                "_save_recording", doc: "Writes the APIMACRO_RECORD file with every exchange so far."
            ) { _ in
                guard runtime.writeRecording() else {
                    PythonRaise.builtin(.runtimeError, "apimacro: the recording could not be written (see stderr)")
                    throw PythonErrorSet()
                }
                return .none
            }
            if settings.record != nil {
                try Interpreter.import("atexit").callMethod("register", [module.object.attribute("_save_recording")])
            }
            return module.object
        } catch is PythonErrorSet {
            return nil
        } catch {
            // The one-line reason (a bad setting names its variable), as `apimacro run` says it.
            if let importError = try? Interpreter.import("builtins").attribute("ImportError") {
                PythonRaise.type(importError, "apimacro: \(error)")
            } else {
                PythonRaise.builtin(.runtimeError, "apimacro: \(error)")
            }
            return nil
        }
    }

    /// The folder holding the `apimacro` package as this Python finds it (site-packages): its
    /// `_native_*.py` files are read from there.
    static func packageFolder() throws -> URL {
        let spec = try Interpreter.import("importlib.util").callMethod("find_spec", [PyRef(string: "apimacro")])
        guard !spec.isNone, let locations = spec.attributeIfPresent("submodule_search_locations"), !locations.isNone
        else {
            PythonRaise.clear()
            throw MacroError("the apimacro package is not importable beside _apimacro; reinstall the apimacro wheel")
        }
        let first = try locations.callMethod("__getitem__", [PythonValue.int(0).toPython()])
        return URL(fileURLWithPath: try String(pythonString: first)).deletingLastPathComponent()
    }

    /// The settings of `apimacro run` with no flags, and what its flags would say from variables.
    static func settingsFromEnvironment(
        process: [String: String] = ProcessEnvironment.variables
    ) throws -> Settings {
        let check = SettingCheck(environment: process, origins: [:])
        func file(_ variable: String) -> URL? {
            check.value(variable).map { URL(fileURLWithPath: $0.value) }
        }
        var settings = try Settings.load(
            record: file("APIMACRO_RECORD"), replay: file("APIMACRO_REPLAY"),
            offline: try check.onOff("APIMACRO_OFFLINE") ?? false,
            useCache: !(try check.onOff("APIMACRO_NO_CACHE") ?? false), process: process)
        settings.stateKey = check.value("APIMACRO_STATE_KEY")?.value
        return settings
    }

    /// Writes `line` to Python's `sys.stderr` (what a notebook shows), else to file descriptor 2.
    static func writeStandardError(_ line: String) {
        let written: Bool = withGIL {
            guard let stream = try? Interpreter.import("sys").attribute("stderr"), !stream.isNone,
                (try? stream.callMethod("write", [PyRef(string: line + "\n")])) != nil
            else {
                PythonRaise.clear()
                return false
            }
            return true
        }
        if !written { MacroHost.standardError(line) }
    }
}
