public import Platform
import PythonBridge

/// Where `run --debugpy [HOST:]PORT` listens: 127.0.0.1 unless a host is given.
public struct DebugAddress: Sendable, Equatable, CustomStringConvertible {
    public let host: String
    public let port: Int

    /// Reads `PORT`, `HOST:PORT` or `[IPv6]:PORT`; nil for anything else (a port outside 1–65535).
    public init?(_ text: String) {
        var host = "127.0.0.1"
        var portText = Substring(text)
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            host = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { return nil }
            portText = rest.dropFirst()
        } else if let colon = text.lastIndex(of: ":") {
            host = String(text[..<colon])
            portText = text[text.index(after: colon)...]
        }
        guard !host.isEmpty, let port = Int(portText), (1...65535).contains(port) else { return nil }
        self.host = host
        self.port = port
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

/// Debugging a macro (`apimacro._debugging` does the Python side): `breakpoint()`'s hook,
/// `run --debugpy`, and the modules a macro imported from its folder (`run --watch`).
public enum Debugging {
    /// Sets `sys.breakpointhook` to a native function that imports `apimacro._debugging` only
    /// when a breakpoint is reached (GIL held).
    ///
    /// The embedded interpreter ignores `PYTHON*` variables, so Python's own hook would not
    /// read `PYTHONBREAKPOINT`; this one does, and refuses pdb where it cannot ask for commands.
    static func installBreakpointHook() throws {
        let hook = try NativeFunction.make(
            "breakpointhook", doc: "breakpoint()'s hook: pdb on a terminal, PYTHONBREAKPOINT honoured."
        ) { arguments in
            let module = try Interpreter.import("apimacro._debugging")
            // Raised from here, the error's traceback ends at the macro's breakpoint() line.
            let refusal = try module.callMethod("refusal")
            if !refusal.isNone {
                PythonRaise.instance(refusal)
                throw PythonErrorSet()
            }
            return try module.attribute("breakpointhook").call(arguments.positional, kwargs: arguments.keywords)
        }
        let sys = try Interpreter.import("sys")
        try sys.setAttribute("breakpointhook", hook)
        try sys.setAttribute("__breakpointhook__", hook)
    }

    /// `run --debugpy`: debugpy (from the active virtualenv or `sys.path`) listens at `address`
    /// for a Debug Adapter Protocol client; with `wait`, until one has attached.
    ///
    /// - Throws: `MacroError` (exit 2) when debugpy is missing (saying how to install it) or
    ///   cannot listen there (the port in use).
    public static func listen(host: MacroHost, at address: DebugAddress, wait: Bool) throws {
        let venv = host.settings.environment["VIRTUAL_ENV"].flatMap { $0.isEmpty ? nil : $0 }
        try withGIL {
            let module = try Interpreter.import("apimacro._debugging")
            let sys = try Interpreter.import("sys")
            do {
                _ = try Interpreter.import("debugpy")
            } catch is PythonErrorSet {
                PythonRaise.clear()
                let install =
                    venv.map { "\($0)/bin/pip install debugpy" }
                    ?? "/usr/bin/python3 -m venv ~/.venvs/apimacro && ~/.venvs/apimacro/bin/pip install debugpy, "
                    + "then run with VIRTUAL_ENV=~/.venvs/apimacro (or activate it)"
                throw MacroError(
                    "--debugpy needs the debugpy package, which Python \(Interpreter.minorVersion) cannot import "
                        + "here (VIRTUAL_ENV \(venv ?? "is not set")); install it: \(install)")
            }
            let inUse = try module.callMethod(
                "port_in_use", [PyRef(string: address.host), PythonValue.int(address.port).toPython()])
            if case .bool(true) = try PythonValue(python: inUse) {
                throw MacroError(
                    "--debugpy \(address): the port is in use by another program; choose another port "
                        + "(--debugpy \(address.host == "127.0.0.1" ? "" : "\(address.host):")5679)")
            }
            // The adapter debugpy starts is a Python program: sys.executable is the virtualenv's
            // python or Debian's python3.X (`MacroHost`), never this binary.
            var python = (try? String(pythonString: sys.attribute("executable"))) ?? ""
            if python.isEmpty || !FileManager.default.isExecutableFile(atPath: python) { python = "/usr/bin/python3" }
            do {
                _ = try module.callMethod(
                    "listen",
                    [
                        PyRef(string: address.host), PythonValue.int(address.port).toPython(), PyRef.bool(wait),
                        PyRef(string: python),
                    ])
            } catch is PythonErrorSet {
                let reason = PythonException.fetch()?.description ?? "unknown error"
                throw MacroError("--debugpy \(address): cannot listen: \(reason)")
            }
        }
    }

    /// The files of the modules imported from `folders` (or below), which are dropped from
    /// `sys.modules` so that the next run imports them afresh (`run --watch`).
    public static func forgetLocalModules(in folders: [URL]) -> [URL] {
        withGIL {
            do {
                let module = try Interpreter.import("apimacro._debugging")
                let list = try PythonValue.list(folders.map { .string($0.path) }).toPython()
                guard case .list(let files) = try PythonValue(python: module.callMethod("forget_local_modules", [list]))
                else { return [] }
                return files.compactMap { item in
                    guard case .string(let path) = item, !path.isEmpty else { return nil }
                    return URL(fileURLWithPath: path)
                }
            } catch {
                PythonRaise.clear()
                return []
            }
        }
    }
}
