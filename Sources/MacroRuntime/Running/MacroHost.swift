import Clients
import Platform
import PythonBridge
import Synchronization
import WebAPI

/// The embedded interpreter with apimacro loaded: `_apimacro`, the bundled
/// package, and the user's virtualenv when one of the same Python is active.
public final class MacroHost: Sendable {
    /// The settings this host was started with.
    public let settings: Settings
    /// Redacts what apimacro prints (tracebacks): every secret known so far.
    var redactor: Redactor { runtime.secrets.redactor }
    /// The transport, clients and exchange log shared by every macro of this process.
    let runtime: Runtime
    /// Requests sent over the network, responses served from the HTTP cache and requests the
    /// replay file answered, so far.
    public var exchangeCounts: (requests: Int, cacheHits: Int, replayed: Int) {
        (runtime.log.requests, runtime.log.cacheHits, runtime.log.replayed)
    }
    /// Writes a line to stderr (tests capture it).
    let warn: @Sendable (String) -> Void
    /// Every `apimacro.check` of the runs so far, in order, what was seen redacted (for reports).
    public var checks: [CheckRecord] { checkRecords.withLock { $0 } }
    let checkRecords = Mutex<[CheckRecord]>([])

    /// One `apimacro.check`: its name, whether it passed, and what was seen (redacted; nil when
    /// nothing was given).
    public struct CheckRecord: Sendable, Equatable {
        public var name: String
        public var passed: Bool
        public var seen: String?
    }

    /// Starts Python (once per process) and loads apimacro into it.
    ///
    /// `warn` writes warnings; by default they go to stderr, yellow when the settings colour it.
    public init(settings: Settings, warn: (@Sendable (String) -> Void)? = nil) throws {
        self.settings = settings
        let palette = settings.color.palette(for: STDERR_FILENO)
        // Long paginations and `map` show a progress line where someone watches a run (not in
        // the REPL, whose prompt is the user's: `switchableVerbose` marks it).
        let progress = settings.switchableVerbose ? nil : ProgressLine.forTerminal(settings)
        let warn =
            warn ?? { line in
                progress?.erase()
                MacroHost.standardError(palette.warning(line))
            }
        let runtime = try Runtime(settings: settings, warn: warn, progress: progress)
        self.runtime = runtime
        self.warn = warn
        try Interpreter.start()
        CodeCache.directory = settings.cacheDirectory.appendingPathComponent("bytecode").path
        try withGIL {
            do {
                _ = try ApimacroModule.install(settings: settings, runtime: runtime)
                try PythonPackage.install()
                try Debugging.installBreakpointHook()
                try setExecutable(virtualEnvironment: try addVirtualEnvironment())
                if runtime.progress != nil {
                    // What the macro prints erases the progress line first.
                    let module = try Interpreter.import("_apimacro")
                    try Interpreter.import("apimacro._terminal").callMethod(
                        "install", [module.attribute("_progress_erase")])
                }
            } catch is PythonErrorSet {
                let failure = PythonException.fetch()?.description ?? "unknown error"
                throw MacroError("cannot load apimacro into Python: \(failure)")
            }
        }
    }

    /// Writes `line` and a newline to stderr.
    public static let standardError: @Sendable (String) -> Void = { line in
        StandardStreams.error(line + "\n")
    }

    /// Makes an active virtualenv's packages importable when it was made with
    /// the same Python minor version, and returns its folder; warns and ignores it otherwise.
    private func addVirtualEnvironment() throws -> URL? {
        guard let venv = settings.environment["VIRTUAL_ENV"], !venv.isEmpty else { return nil }
        let root = URL(fileURLWithPath: venv)
        let minor = Interpreter.minorVersion
        let config = (try? String(contentsOf: root.appendingPathComponent("pyvenv.cfg"), encoding: .utf8)) ?? ""
        let version = config.split(separator: "\n").compactMap { line -> String? in
            let parts = line.split(separator: "=", maxSplits: 1).map { $0.trimmingWhitespace() }
            guard parts.count == 2, ["version", "version_info"].contains(parts[0]) else { return nil }
            return parts[1]
        }.first
        let sitePackages = root.appendingPathComponent("lib/python\(minor)/site-packages")
        let sameMinor = version.map { $0 == minor || $0.hasPrefix(minor + ".") } ?? false
        guard sameMinor, FileManager.default.fileExists(atPath: sitePackages.path) else {
            warn(
                "apimacro: ignoring VIRTUAL_ENV=\(venv): it is not a Python \(minor) virtualenv "
                    + "(apimacro embeds Python \(Interpreter.version)); create one with /usr/bin/python3 -m venv")
            return nil
        }
        try Interpreter.import("site").callMethod("addsitedir", [PyRef(string: sitePackages.path)])
        return root
    }

    /// Sets `sys.executable` (empty in an embedded interpreter) to the `python3` of the Python
    /// apimacro embeds, so `subprocess.run([sys.executable, ...])` and `multiprocessing`'s spawn
    /// start a real Python: the active virtualenv's `bin/python` when it was accepted, else
    /// `PREFIX/bin/pythonX.Y` (Debian's `/usr/bin/python3.11`).
    ///
    /// Left empty when neither exists.
    ///
    /// That Python has no `apimacro` module: a child that imports it should be `apimacro run`.
    private func setExecutable(virtualEnvironment: URL?) throws {
        let sys = try Interpreter.import("sys")
        let prefix = try String(pythonString: sys.attribute("base_prefix"))
        let base = URL(fileURLWithPath: prefix).appendingPathComponent("bin/python\(Interpreter.minorVersion)").path
        guard FileManager.default.isExecutableFile(atPath: base) else { return }
        let venvPython = virtualEnvironment?.appendingPathComponent("bin/python").path
        let executable = venvPython.flatMap { FileManager.default.isExecutableFile(atPath: $0) ? $0 : nil } ?? base
        try sys.setAttribute("executable", PyRef(string: executable))
        try sys.setAttribute("_base_executable", PyRef(string: base))
    }
}
