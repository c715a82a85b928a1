import Clients
import Dispatch
public import Platform
import PythonBridge
import Store
import Synchronization
import WebAPI

/// Runs one macro file as `__main__` in the embedded interpreter and turns
/// how it ended into an exit code (SPEC §1).
public struct MacroRunner {
    let host: MacroHost
    /// Runs just before the process ends itself (a macro that ignored its `--timeout`):
    /// the command line writes a `batch` child's counts there.
    let beforeHardExit: @Sendable () -> Void
    /// Whether a session goes on after the macro (the REPL's `:run`): then only the `atexit`
    /// handlers the macro registered run when it ends, not the session's.
    let inSession: Bool
    /// `run --pdb`: after the traceback of a macro that raised, pdb opens post-mortem at the
    /// frame that raised (on a terminal).
    public var postMortem = false

    /// A runner on `host`; `inSession` for a macro run inside the REPL.
    public init(host: MacroHost, inSession: Bool = false, beforeHardExit: @escaping @Sendable () -> Void = {}) {
        self.host = host
        self.inSession = inSession
        self.beforeHardExit = beforeHardExit
    }

    /// Runs `file` with `arguments` and returns the exit code: 0 success, 1
    /// the macro raised (traceback on stderr, secrets redacted) or timed out,
    /// `n` for `sys.exit(n)`, 130 on Ctrl-C, 143 on SIGTERM and 129 on SIGHUP
    /// (each ends the macro as Ctrl-C does).
    ///
    /// `name` is how the user called it.
    ///
    /// Call on the main thread (Python delivers Ctrl-C and the deadline there).
    public func run(file: URL, arguments: [String], name: String) throws -> Int32 {
        try run(.file(file), arguments: arguments, name: name)
    }

    /// Runs a macro file, `-c` code, standard input or `-m` module (`source`) as `python3` would,
    /// and returns the exit code as `run(file:arguments:name:)` does.
    ///
    /// A file that cannot be read is a `MacroError`; a module that cannot be found ends the
    /// run with a usage error (exit 2) naming it.
    public func run(_ source: MacroSource, arguments: [String], name: String) throws -> Int32 {
        let text: Data?
        switch source {
        case .file(let file):
            do {
                text = try Data(contentsOf: file)
            } catch {
                throw MacroError("cannot read \(file.path): \(SystemErrorText.reason(error))")
            }
        case .code(let code): text = Data(code.utf8)
        case .standardInput: text = Data(StandardStreams.readInput())
        case .module: text = nil
        }
        return withGIL {
            var deadline: Deadline?
            defer { deadline?.disarm() }
            var termination: TerminationSignals?
            var code: Int32
            do {
                termination = TerminationSignals.armIfPossible()
                if inSession { try Interpreter.import("apimacro._atexit_scope").callMethod("begin") }
                try beginStore(source, name: name)
                let namespace = try prepare(source, arguments: arguments)
                if let seconds = host.settings.timeout {
                    let runtime = host.runtime
                    deadline = try Deadline.arm(
                        seconds: seconds, macro: name, warn: host.warn,
                        beforeExit: { [beforeHardExit] in
                            runtime.writeRecording()
                            beforeHardExit()
                        })
                }
                if case .module(let module) = source {
                    code = try runModule(module)
                } else if let text, let filename = source.filename {
                    code = try execute(
                        source: text, filename: filename, namespace: namespace, arguments: arguments, name: name)
                } else {
                    code = ExitReport.success.exitCode
                }
                host.runtime.progress?.erase()
            } catch {
                host.runtime.progress?.erase()
                let ending = report(error, name: name, source: source, signal: termination?.signal)
                if let message = ending.message { writeError(message, paint: { $0.error($1) }) }
                code = ending.exitCode
            }
            // Its output's reader gone (`| head`) at the final flush: the quiet end of a closed pipe.
            if !finish(), code == ExitReport.success.exitCode { code = ExitReport.closedOutput.exitCode }
            // A failed apimacro.check fails the run (exit 1), its state not saved.
            if reportFailedChecks(), code == ExitReport.success.exitCode { code = ExitReport.failure().exitCode }
            // State and rows only for a run that succeeded and was not asked to stop meanwhile.
            deadline?.disarm()
            if code == ExitReport.success.exitCode, termination?.signal == nil, !commitStore(name: name) {
                code = ExitReport.failure().exitCode
            }
            host.runtime.store.end()
            // Back to the REPL's own state (--state-key) after a `:run`, read afresh: the Python
            // side must not keep the macro's values and write them under the session's key.
            if inSession {
                host.runtime.store.begin(key: host.settings.stateKey)
                if let loaded = try? Interpreter.import("sys").attribute("modules").item("apimacro._store") {
                    _ = try? loaded.callMethod("reset")
                }
                PythonRaise.clear()
            }
            // However the macro ended, the --record file holds what it fetched; a file that
            // could not be written is a failed run, never a silent loss.
            if !host.runtime.writeRecording(), code == ExitReport.success.exitCode {
                code = ExitReport.failure().exitCode
            }
            deadline?.restore()
            termination?.restore()
            // SIGTERM or SIGHUP asked the process to end, even if the macro swallowed the interrupt.
            if let signal = termination?.signal { code = ExitReport.stopped(signal: signal).exitCode }
            return code
        }
    }

    /// Starts the run's state and rows: its state key, `--output` checked (a usage error, exit 2,
    /// before the macro runs, the file untouched), and `apimacro.state` forgotten from a run before.
    private func beginStore(_ source: MacroSource, name: String) throws {
        let settings = host.settings
        try host.runtime.store.checkLocations()
        let key = StoreSession.key(for: source, settings: settings, inSession: inSession)
        let output = try settings.output.map { path in
            try StoreSession.runOutput(
                path: path, key: settings.outputKey, macro: key ?? name, settings: settings)
        }
        host.runtime.store.begin(key: key, runOutput: output)
        if let loaded = try Interpreter.import("sys").attribute("modules").item("apimacro._store") {
            _ = try loaded.callMethod("reset")
        }
    }

    /// Commits the state and rows of a run that ended with exit 0, with its line in
    /// `_apimacro_runs`; false (the reason on stderr) when they could not be written, and then
    /// nothing was.
    private func commitStore(name: String) -> Bool {
        let store = host.runtime.store
        do {
            if let loaded = try Interpreter.import("sys").attribute("modules").item("apimacro._store") {
                _ = try loaded.callMethod("finish")
            }
            guard !store.isEmpty else { return true }
            let counts = host.exchangeCounts
            let record = RunTransaction.RunRecord(
                macro: (try? store.key()) ?? name, started: store.started, finished: Date(), exit: 0,
                requests: counts.requests + counts.replayed, cacheHits: counts.cacheHits)
            _ = try withoutGIL { try store.commit(run: record) }
            return true
        } catch is PythonErrorSet {
            let failure = PythonException.fetch()?.description ?? "unknown error"
            writeError("apimacro: \(name) succeeded, but its state was not saved: \(failure)")
        } catch {
            writeError("apimacro: \(name) succeeded, but its state and rows were not saved: \(error)")
        }
        return false
    }

    /// Sets `sys.argv`, `sys.path[0]` and a fresh `__main__` module, as `python3` does for
    /// `source`: a file's folder is `sys.path[0]`, else the working directory.
    private func prepare(_ source: MacroSource, arguments: [String]) throws -> PyRef {
        let sys = try Interpreter.import("sys")
        try sys.setAttribute(
            "argv", PythonValue.list(([source.argumentZero] + arguments).map { .string($0) }).toPython())
        let folderPath: String
        if case .file(let file) = source {
            folderPath = file.deletingLastPathComponent().path
        } else {
            folderPath = host.settings.workingDirectory.path
        }
        let folder = try PyRef(string: folderPath)
        let path = try sys.attribute("path")
        let first = try path.callMethod("__getitem__", [PythonValue.int(0).toPython()])
        if try first.str() != folderPath {
            try path.callMethod("insert", [PythonValue.int(0).toPython(), folder])
        }
        // type(sys) is types.ModuleType, without importing types at start-up.
        let moduleType = try Interpreter.import("builtins").attribute("type").call([sys])
        let module = try moduleType.call([PyRef(string: "__main__")])
        if case .file(let file) = source { try module.setAttribute("__file__", PyRef(string: file.path)) }
        try module.setAttribute("__builtins__", Interpreter.import("builtins"))
        try module.setAttribute("__cached__", .none)
        try sys.attribute("modules").setItem("__main__", module)
        return try module.attribute("__dict__")
    }

    /// `-m MODULE`: runs the module as `__main__` with `runpy.run_module` (`python3 -m`'s
    /// behaviour: `sys.argv[0]` becomes its file); one that cannot be found is a `MacroError`.
    private func runModule(_ module: String) throws -> Int32 {
        let spec: PyRef
        do {
            spec = try Interpreter.import("importlib.util").callMethod("find_spec", [PyRef(string: module)])
        } catch is PythonErrorSet {
            let reason = PythonException.fetch()?.description ?? "it cannot be imported"
            throw MacroError("cannot run -m \(module): \(reason)")
        }
        guard !spec.isNone else {
            let venv = host.settings.environment["VIRTUAL_ENV"].map { " and the virtualenv \($0)" } ?? ""
            throw MacroError(
                "no module named '\(module)' (looked in the working directory, Python's own modules\(venv); "
                    + "to use a package from PyPI, activate a virtualenv of /usr/bin/python3 that has it)")
        }
        _ = try Interpreter.import("runpy").callMethod(
            "run_module", [PyRef(string: module)],
            kwargs: [("run_name", PyRef(string: "__main__")), ("alter_sys", .bool(true))])
        return ExitReport.success.exitCode
    }

    /// Compiles and runs the macro, then its `main(...)` when it has one and
    /// does not call it itself behind `if __name__ == "__main__"`.
    private func execute(source: Data, filename: String, namespace: PyRef, arguments: [String], name: String) throws
        -> Int32
    {
        let code = try Interpreter.compileFile(Array(source), filename: filename)
        try Interpreter.import("builtins").callMethod("exec", [code, namespace])
        guard let main = try namespace.item("main"), main.isCallable else { return ExitReport.success.exitCode }
        if MainGuard.present(in: Array(source)) {
            return ExitReport.success.exitCode
        }
        let result: PyRef
        if arguments.isEmpty, Self.takesNothing(main) {
            // No argument to read and none to give: `_main`'s parser (argparse, inspect, typing,
            // pathlib, datetime: half an empty macro's start-up) is not loaded (issue 43).
            let returned = try main.call([])
            result =
                returned.typeName == "coroutine"
                ? try Interpreter.import("asyncio").callMethod("run", [returned]) : returned
        } else if let runner = try? Interpreter.import("apimacro._main") {
            let argv = try PythonValue.list(arguments.map { .string($0) }).toPython()
            result = try runner.callMethod("call_main", [main, argv, PyRef(string: "apimacro run \(name)")])
        } else {
            PythonRaise.clear()
            result = try main.call(arguments.map { try PyRef(string: $0) })
        }
        // `return 3` from main() exits 3, as `sys.exit(main())` would.
        if case .int(let status) = (try? PythonValue(python: result)) ?? .none {
            return Int32(truncatingIfNeeded: status)
        }
        PythonRaise.clear()
        return ExitReport.success.exitCode
    }

    /// Whether `main` is a plain `def main():` taking no parameter at all.
    ///
    /// That is a Python function (not async, not a generator, not wrapped, no `__signature__`)
    /// whose code object declares no parameter, no `*args` and no `**kwargs`. Anything else goes
    /// through `_main.call_main`.
    static func takesNothing(_ main: PyRef) -> Bool {
        guard let code = main.attributeIfPresent("__code__"), main.attributeIfPresent("__wrapped__") == nil,
            main.attributeIfPresent("__signature__") == nil
        else { return false }
        func number(_ name: String) -> Int? {
            guard let value = code.attributeIfPresent(name), case .int(let number) = try? PythonValue(python: value)
            else { return nil }
            return number
        }
        // CO_VARARGS, CO_VARKEYWORDS, CO_GENERATOR, CO_COROUTINE, CO_ITERABLE_COROUTINE, CO_ASYNC_GENERATOR.
        let special = 0x04 | 0x08 | 0x20 | 0x80 | 0x100 | 0x200
        guard let arguments = number("co_argcount"), let keywords = number("co_kwonlyargcount"),
            let positional = number("co_posonlyargcount"), let flags = number("co_flags")
        else { return false }
        return arguments == 0 && keywords == 0 && positional == 0 && flags & special == 0
    }

    /// How the macro ended (`ExitReport`): what Python prints itself (a traceback, the text
    /// given to `sys.exit`) is written here; apimacro's own line is the report's `message`.
    private func report(_ error: any Error, name: String, source: MacroSource, signal: Int32? = nil) -> ExitReport {
        guard error is PythonErrorSet, let (type, value, traceback) = PythonException.fetchRaw() else {
            return ExitReport(error) ?? .failure(SystemErrorText.describe(error))
        }
        if PythonRaise.matches(type, .systemExit) {
            return exitStatus(of: value)
        }
        if endedByClosedOutput(value) {
            PythonRaise.clear()
            return .closedOutput
        }
        if PythonRaise.matches(type, .keyboardInterrupt) {
            if let signal { return .stopped(signal: signal, name) }
            return .interrupted(name)
        }
        // `q` in pdb (breakpoint(), pdb.set_trace()): the user stopped the macro, no traceback.
        if (try? type.attribute("__module__").str()) == "bdb", (try? type.attribute("__name__").str()) == "BdbQuit" {
            PythonRaise.clear()
            // pdb.set_trace() with stdin at its end (a batch job's /dev/null, a pipe) quits at once.
            if isatty(STDIN_FILENO) == 0 {
                return .failure(
                    "\(name) stopped in pdb, which found no terminal on stdin (a batch job, or input from a file "
                        + "or pipe) and quit; debug it with apimacro run on a terminal")
            }
            return .failure("\(name) stopped in the debugger (q)")
        }
        // apimacro's own frames out of the exceptions chained to this one too (`raise ... from`).
        if let value, (try? Interpreter.import("apimacro._tracebacks").callMethod("hide_internal", [value])) == nil {
            PythonRaise.clear()
        }
        let frames = macroFrames(traceback, source: source)
        let described = PythonException.describe(type: type, value: value, traceback: frames)
        writeError(described.traceback, newline: false, paint: { $0.traceback($1) })
        if postMortem, let frames { debugPostMortem(frames) }
        return .failure()
    }

    /// `run --pdb`: pdb post-mortem at the frame that raised, after the redacted traceback.
    private func debugPostMortem(_ traceback: PyRef) {
        Interpreter.flushStandardStreams()
        if (try? Interpreter.import("apimacro._debugging").callMethod("post_mortem", [traceback])) == nil {
            if let exception = PythonException.fetch() {
                writeError("apimacro: the post-mortem debugger failed: \(exception.description)")
            }
            PythonRaise.clear()
        }
        Interpreter.flushStandardStreams()
    }

    /// The traceback as `python script.py` shows it: from the macro's first frame on (not
    /// apimacro's `_main.py` calling `main()`, nor `runpy` starting a `-m` module), without the
    /// frames of apimacro's own Python code (`<apimacro>`, `<_apimacro>`) in between.
    ///
    /// Unchanged when no frame is the macro's.
    private func macroFrames(_ traceback: PyRef?, source: MacroSource) -> PyRef? {
        func filename(_ entry: PyRef) -> String? {
            try? entry.attribute("tb_frame").attribute("f_code").attribute("co_filename").str()
        }
        func next(_ entry: PyRef) -> PyRef? {
            guard let following = entry.attributeIfPresent("tb_next"), !following.isNone else { return nil }
            return following
        }
        let runpy = (try? Interpreter.import("runpy").attribute("__file__").str()) ?? "runpy.py"
        let isMacro: (String?) -> Bool = { name in
            if let expected = source.filename { return name == expected }
            // runpy's own frames read <frozen runpy> (a frozen module) or its file.
            return ![runpy, "<frozen runpy>", "<apimacro>", "<_apimacro>"].contains(name)
        }
        var first = traceback
        while let entry = first, !isMacro(filename(entry)) { first = next(entry) }
        guard let start = first else {
            PythonRaise.clear()
            return traceback
        }
        var previous = start
        while let following = next(previous) {
            if ["<apimacro>", "<_apimacro>"].contains(filename(following)) {
                // Unlink the internal frame (tb_next is writable since Python 3.7).
                try? previous.setAttribute("tb_next", following.attributeIfPresent("tb_next") ?? .none)
            } else {
                previous = following
            }
        }
        PythonRaise.clear()
        return start
    }

    /// `sys.exit(code)`: None → 0, an int passes through, anything else is
    /// printed and gives 1, as `python3` does.
    private func exitStatus(of exception: PyRef?) -> ExitReport {
        guard let code = exception?.attributeIfPresent("code"), !code.isNone else { return .success }
        if case .int(let status) = (try? PythonValue(python: code)) ?? .none {
            return .status(Int32(truncatingIfNeeded: status))
        }
        if case .bool(let flag) = (try? PythonValue(python: code)) ?? .none { return .status(flag ? 1 : 0) }
        writeError((try? code.str()) ?? "")
        PythonRaise.clear()
        return .failure()
    }

    /// Writes redacted text to Python's `sys.stderr` (so it stays in order
    /// with what the macro printed), falling back to the process's stderr; `paint` colours it
    /// when the settings colour stderr.
    func writeError(_ text: String, newline: Bool = true, paint: (Palette, String) -> String = { $1 }) {
        let palette = host.settings.color.palette(for: STDERR_FILENO)
        // On a terminal, a server's text quoted in an exception is shown, not obeyed.
        let shown = TerminalText.shown(host.redactor.redact(text), on: STDERR_FILENO)
        let line = paint(palette, shown) + (newline ? "\n" : "")
        Interpreter.flushStandardStreams()
        if let stderr = try? Interpreter.import("sys").attribute("stderr"), !stderr.isNone,
            (try? stderr.callMethod("write", [PyRef(string: line)])) != nil
        {
            Interpreter.flushStandardStreams()
            return
        }
        PythonRaise.clear()
        StandardStreams.error(line)
    }

    /// Whether `exception` is a write to a stdout whose reader has gone (`| head`): then the
    /// run ends quietly (`apimacro._stdout.closed_stdout`, which also silences stdout).
    private func endedByClosedOutput(_ exception: PyRef?) -> Bool {
        guard let exception, let output = try? Interpreter.import("apimacro._stdout"),
            let closed = try? output.callMethod("closed_stdout", [exception]),
            case .bool(true) = try? PythonValue(python: closed)
        else {
            PythonRaise.clear()
            return false
        }
        return true
    }

    /// Prints the run's failed checks (`apimacro.check`) on stderr with what was seen (redacted,
    /// control characters escaped on a terminal), and forgets every check; true when one failed.
    private func reportFailedChecks() -> Bool {
        keepChecks()
        guard let loaded = try? Interpreter.import("sys").attribute("modules").item("apimacro._checks"),
            let taken = try? loaded.callMethod("take_failed"), case .list(let failed) = try? PythonValue(python: taken),
            !failed.isEmpty
        else {
            PythonRaise.clear()
            return false
        }
        var lines = ["apimacro: \(failed.count) check\(failed.count == 1 ? "" : "s") failed:"]
        for item in failed {
            guard case .tuple(let pair) = item, pair.count == 2, case .string(let name) = pair[0] else { continue }
            let seen = if case .string(let seen) = pair[1] { ": seen \(seen)" } else { "" }
            lines.append("  FAILED \(name)\(seen)")
        }
        writeError(lines.joined(separator: "\n"), paint: { $0.error($1) })
        return true
    }

    /// Copies every check of the run (`apimacro._checks.records`) into the host's `checks`,
    /// redacted, for `--report`.
    private func keepChecks() {
        guard let loaded = try? Interpreter.import("sys").attribute("modules").item("apimacro._checks"),
            let taken = try? loaded.callMethod("records"), case .list(let records) = try? PythonValue(python: taken)
        else {
            PythonRaise.clear()
            return
        }
        let kept = records.compactMap { item -> MacroHost.CheckRecord? in
            guard case .tuple(let fields) = item, fields.count == 3, case .string(let name) = fields[0],
                case .bool(let passed) = fields[1]
            else { return nil }
            let seen: String? = if case .string(let seen) = fields[2] { host.redactor.redact(seen) } else { nil }
            return MacroHost.CheckRecord(name: host.redactor.redact(name), passed: passed, seen: seen)
        }
        host.checkRecords.withLock { $0 += kept }
    }

    /// What `python3` does after the script: wait for non-daemon threads, run
    /// `atexit` handlers, flush the streams.
    ///
    /// False when stdout's reader had gone and what was left to print was lost.
    private func finish() -> Bool {
        let globals = try? Interpreter.newGlobals()
        var delivered = true
        if let globals {
            do {
                try globals.setItem("in_session", .bool(inSession))
                try Interpreter.exec(try PythonPackage.source("_finish.py"), globals: globals, filename: "<apimacro>")
                if let flag = try? globals.item("delivered"), case .bool(false) = try? PythonValue(python: flag) {
                    delivered = false
                }
            } catch {
                if let exception = PythonException.fetch() {
                    writeError(exception.traceback, newline: false)
                } else {
                    writeError("apimacro: \(SystemErrorText.describe(error))", newline: true)
                }
            }
        }
        Interpreter.flushStandardStreams()
        return delivered
    }
}

/// A macro's `--timeout`: at the deadline Python raises `MacroTimeout` in the
/// main thread (through SIGALRM, which also wakes a blocking sleep, and the
/// interrupt counter, which wakes native waits); a macro that swallows it is
/// stopped one second after the interrupt.
final class Deadline {
    /// Shared with the timer callbacks: whether the run ended first.
    private final class Clock: Sendable {
        let done = Atomic<Bool>(false)
    }

    private let clock = Clock()
    private let previousHandler: PyRef

    /// How long a macro may ignore `MacroTimeout` before the process ends.
    static let grace = 1.0

    private init(previousHandler: PyRef) {
        self.previousHandler = previousHandler
    }

    /// Installs the SIGALRM handler and starts the clock (GIL held, main thread).
    ///
    /// `beforeExit` runs just before a hard exit (it writes the `--record` file and a `batch` child's counts).
    static func arm(
        seconds: Double, macro: String, warn: @escaping @Sendable (String) -> Void,
        beforeExit: @escaping @Sendable () -> Void = {}
    ) throws -> Deadline {
        let signal = try Interpreter.import("signal")
        let seconds = Seconds.clamped(seconds)
        let message = "\(macro) ran longer than its --timeout of \(SecondsText.format(seconds)) s"
        let handler = try NativeFunction.make("_on_deadline") { _ in
            let timeout = try Interpreter.import("_apimacro").attribute("MacroTimeout")
            PythonRaise.type(timeout, message)
            throw PythonErrorSet()
        }
        let previous = try signal.callMethod("signal", [signal.attribute("SIGALRM"), handler])
        let deadline = Deadline(previousHandler: previous)
        let clock = deadline.clock
        let when = DispatchTime.now() + seconds
        DispatchQueue.global().asyncAfter(deadline: when) {
            guard !clock.done.load(ordering: .acquiring) else { return }
            Interrupts.signalMainThread(SIGALRM)
            // The grace counts from the interrupt's delivery, not from the deadline: a timer
            // that fired late on a busy machine does not shorten the macro's chance to stop.
            DispatchQueue.global().asyncAfter(deadline: .now() + grace) {
                guard !clock.done.load(ordering: .acquiring) else { return }
                warn("apimacro: \(message), and did not stop when interrupted; ending it")
                beforeExit()
                _exit(ExitReport.failure().exitCode)
            }
        }
        return deadline
    }

    /// Stops the clock.
    func disarm() {
        clock.done.store(true, ordering: .releasing)
    }

    /// Puts back the SIGALRM handler that was there before (GIL held).
    func restore() {
        guard let signal = try? Interpreter.import("signal"), let number = try? signal.attribute("SIGALRM"),
            (try? signal.callMethod("signal", [number, previousHandler])) != nil
        else {
            PythonRaise.clear()
            return
        }
    }
}
