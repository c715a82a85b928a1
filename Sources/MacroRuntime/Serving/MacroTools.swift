import Clients
import Platform
import PluginHost
import PythonBridge
import WebAPI

/// The macros on the macro path (`./macros/`, `$APIMACRO_HOME/macros/`, each plugin's
/// `macros/`, as `apimacro run` looks them up) as MCP tools, and the calls that run them in
/// the embedded interpreter kept warm (`apimacro._serving` does the Python side).
///
/// The folders are read afresh at every listing and call: a macro added or edited while the
/// server runs is seen.
final class MacroTools: Sendable {
    /// One macro offered as a tool.
    struct Tool: Sendable {
        let name: String
        let file: URL
        let description: String
        let inputSchema: JSONValue
        /// Why it writes (it is then offered only with `--allow-writes`), or nil.
        let writes: String?
    }

    /// A macro on the path that is no tool, and why.
    struct Skipped: Sendable {
        let name: String
        let reason: String
    }

    let host: MacroHost
    let allowWrites: Bool

    init(host: MacroHost, allowWrites: Bool) {
        self.host = host
        self.allowWrites = allowWrites
    }

    /// A tool's name as MCP allows it.
    static func isToolName(_ name: String) -> Bool {
        !name.isEmpty && name.count <= 128
            && name.unicodeScalars.allSatisfy {
                ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0)
                    || $0 == "_" || $0 == "-" || $0 == "."
            }
    }

    /// The plugins, and the names of their endpoints that write (any method but GET and HEAD).
    private func plugins() -> (registry: PluginRegistry, writes: [String]) {
        let registry = PluginRegistry.load(settings: host.settings)
        let writes = registry.plugins.flatMap { plugin in
            plugin.endpoints.filter { !["GET", "HEAD"].contains($0.method.uppercased()) }.map(\.name)
        }
        return (registry, Array(Set(writes)).sorted())
    }

    /// The macro files by name, first folder first (a later macro of the same name is shadowed).
    private func files(_ registry: PluginRegistry) -> [(name: String, file: URL)] {
        let folders =
            [
                host.settings.workingDirectory.appendingPathComponent("macros"),
                host.settings.home.appendingPathComponent("macros"),
            ] + registry.macroFolders
        var seen = Set<String>()
        var found: [(String, URL)] = []
        for folder in folders {
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
                .filter { $0.hasSuffix(".py") && !$0.hasPrefix("_") }.sorted()
            for file in names {
                let name = String(file.dropLast(3))
                guard seen.insert(name).inserted else { continue }
                found.append((name, folder.appendingPathComponent(file)))
            }
        }
        return found
    }

    /// Every macro on the path: the tools (those that write only with `--allow-writes`) and
    /// the macros that cannot be tools, with why.
    func scan() -> (tools: [Tool], skipped: [Skipped]) {
        let (registry, writes) = plugins()
        var tools: [Tool] = []
        var skipped: [Skipped] = []
        for (name, file) in files(registry) {
            guard Self.isToolName(name) else {
                skipped.append(Skipped(name: name, reason: "its name is not a tool name (letters, digits, _ - .)"))
                continue
            }
            let info = describe(file, pluginWrites: writes)
            if let problem = info["problem"]?.string {
                skipped.append(Skipped(name: name, reason: problem))
                continue
            }
            let tool = Tool(
                name: name, file: file, description: info["description"]?.string ?? "",
                inputSchema: info["inputSchema"] ?? .object(["type": .string("object")]), writes: info["writes"]?.string
            )
            if tool.writes != nil, !allowWrites {
                skipped.append(
                    Skipped(name: name, reason: "it writes (\(tool.writes ?? "")); offered with --allow-writes"))
                continue
            }
            tools.append(tool)
        }
        return (tools, skipped)
    }

    /// `_serving.describe` of `file`.
    private func describe(_ file: URL, pluginWrites: [String]) -> JSONValue {
        withGIL {
            do {
                let serving = try Interpreter.import("apimacro._serving")
                let text = try serving.callMethod(
                    "describe",
                    [PyRef(string: file.path), PythonValue.list(pluginWrites.map { .string($0) }).toPython()])
                return JSONValue.parse(Data(try String(pythonString: text).utf8)) ?? .object([:])
            } catch {
                let reason = PythonException.fetch()?.description ?? SystemErrorText.describe(error)
                return .object(["problem": .string("cannot be read: \(reason)")])
            }
        }
    }

    /// How a call ended.
    enum Outcome: Sendable {
        /// No such tool (or one offered only with `--allow-writes`): a JSON-RPC error.
        case unknown(String)
        /// The result of `tools/call` (an MCP `CallToolResult`), redacted.
        case result(JSONValue)
    }

    /// Runs the tool `name` with `arguments` on this thread (any thread: the GIL is taken).
    func call(_ name: String, arguments: JSONValue) -> Outcome {
        let (registry, writes) = plugins()
        guard Self.isToolName(name), let file = files(registry).first(where: { $0.name == name })?.file else {
            return .unknown("unknown tool '\(name.prefix(128))': no macro of that name (tools/list lists them)")
        }
        if !allowWrites {
            let info = describe(file, pluginWrites: writes)
            if let why = info["writes"]?.string {
                return .unknown(
                    "unknown tool '\(name)': the macro writes (\(why)), and apimacro mcp offers macros that write "
                        + "only when started with --allow-writes")
            }
        }
        let answer: JSONValue = withGIL {
            do {
                let serving = try Interpreter.import("apimacro._serving")
                let timeout = host.settings.timeout.map { PythonValue.float($0) } ?? .none
                let text = try serving.callMethod(
                    "call",
                    [
                        PyRef(string: file.path), PyRef(string: String(decoding: arguments.text, as: UTF8.self)),
                        timeout.toPython(), PythonValue.list(writes.map { .string($0) }).toPython(),
                    ])
                return JSONValue.parse(Data(try String(pythonString: text).utf8))
                    ?? .object(["ok": .bool(false), "error": .string("the call's result could not be read")])
            } catch {
                let reason = PythonException.fetch()?.description ?? SystemErrorText.describe(error)
                return .object(["ok": .bool(false), "error": .string(reason)])
            }
        }
        // However the call ended, the --record file holds what it fetched.
        host.runtime.writeRecording()
        return .result(Self.result(of: answer, name: name).mapStrings(host.redactor.redact))
    }

    /// `_serving.call`'s answer as an MCP `CallToolResult`.
    static func result(of answer: JSONValue, name: String) -> JSONValue {
        func text(_ value: String) -> JSONValue { .object(["type": .string("text"), "text": .string(value)]) }
        if let invalid = answer["invalid"]?.string {
            return .object([
                "isError": .bool(true), "content": .array([text("invalid arguments for \(name): \(invalid)")]),
            ])
        }
        if let unavailable = answer["unavailable"]?.string {
            return .object(["isError": .bool(true), "content": .array([text("\(name) \(unavailable)")])])
        }
        var content: [JSONValue] = []
        if let printed = answer["printed"]?.string, !printed.isEmpty { content.append(text(printed)) }
        var structured: [String: JSONValue] = [:]
        if let rows = answer["rows"] { structured["rows"] = rows }
        if let value = answer["value"] { structured["result"] = value }
        if !structured.isEmpty {
            content.append(text(String(decoding: JSONValue.object(structured).text, as: UTF8.self)))
        }
        let ok = answer["ok"]?.bool ?? false
        if !ok {
            content.append(text(answer["error"]?.string ?? "\(name) failed"))
        }
        // Some clients show nothing for an empty result: say that it ran.
        if content.isEmpty { content.append(text("\(name) ran and printed nothing")) }
        var result: [String: JSONValue] = ["content": .array(content), "isError": .bool(!ok)]
        if !structured.isEmpty { result["structuredContent"] = .object(structured) }
        return .object(result)
    }

    /// The resources: each tool's source, then each plugin's manifest.
    func resources() -> [(uri: String, name: String, mimeType: String, file: URL)] {
        let (tools, _) = scan()
        var found = tools.map { tool in
            ("apimacro://macros/\(tool.name).py", "\(tool.name).py", "text/x-python", tool.file)
        }
        for plugin in PluginRegistry.load(settings: host.settings).plugins {
            found.append(
                (
                    "apimacro://plugins/\(plugin.name)/plugin.toml", "\(plugin.name) plugin.toml", "application/toml",
                    plugin.file
                ))
        }
        return found
    }

    /// The text of the resource `uri` (redacted), or nil when there is none of that name.
    func read(_ uri: String) -> (text: String, mimeType: String)? {
        guard let resource = resources().first(where: { $0.uri == uri }),
            let data = FileManager.default.contents(atPath: resource.file.path), data.count <= 1 << 20
        else { return nil }
        return (host.redactor.redact(String(decoding: data, as: UTF8.self)), resource.mimeType)
    }

    /// Routes Python's `sys.stdout` by call (once, at the server's start).
    func install() throws {
        try withGIL {
            do {
                _ = try Interpreter.import("apimacro._serving").callMethod("install")
            } catch is PythonErrorSet {
                throw MacroError(
                    "cannot start the MCP server: \(PythonException.fetch()?.description ?? "unknown error")")
            }
        }
    }
}
