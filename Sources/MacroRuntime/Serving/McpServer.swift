import Clients
import Dispatch
public import Platform
import PythonBridge
public import WebAPI

/// `apimacro mcp`: the Model Context Protocol's messages (JSON-RPC 2.0) answered over the
/// macros (`MacroTools`), whatever carries them (`McpStdio`, `McpHTTP`).
///
/// Stateless: every request is answered on its own (`initialize` says what the server is and
/// offers; a client that skips it is answered all the same).
public final class McpServer: Sendable {
    /// The protocol versions of the `initialize` handshake this server speaks, newest first:
    /// a client asking for one of them gets it, any other client the newest.
    public static let protocolVersions = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]

    let tools: MacroTools
    /// Tool calls running at once, at most (`--jobs`).
    let jobs: Int
    private let slots: DispatchSemaphore
    /// The interrupt counter when the server was made: a Ctrl-C from then on ends it, even one
    /// that comes before a transport waits.
    let interruptBaseline = Interrupts.generation

    /// A server over `host`'s interpreter and clients; macros that write are tools only with
    /// `allowWrites`; at most `jobs` calls run at once.
    public init(host: MacroHost, allowWrites: Bool, jobs: Int) throws {
        tools = MacroTools(host: host, allowWrites: allowWrites)
        self.jobs = max(1, jobs)
        slots = DispatchSemaphore(value: max(1, jobs))
        try tools.install()
    }

    /// What the server offers, one line for stderr at its start: the tools, and the macros
    /// that are not (with why).
    public func summary() -> String {
        let (offered, skipped) = tools.scan()
        var lines = [
            "apimacro mcp: \(offered.count) tool\(offered.count == 1 ? "" : "s")"
                + (offered.isEmpty ? "" : ": " + offered.map(\.name).joined(separator: ", "))
        ]
        for macro in skipped { lines.append("apimacro mcp: \(macro.name) is not offered: \(macro.reason)") }
        return lines.joined(separator: "\n")
    }

    /// Whether `message` is a `tools/call` request (which may take long: run it apart).
    public static func isToolCall(_ message: JSONValue) -> Bool {
        message["method"]?.string == "tools/call" && message["id"] != nil
    }

    /// The answer to one message (a stdio line, an HTTP body): nil for a notification or a
    /// response, which are answered by nothing.
    public func answer(_ data: Data) -> JSONValue? {
        guard let message = JSONValue.parse(data) else {
            return Self.error(.null, -32700, "parse error: the message is not JSON (one JSON-RPC object per line)")
        }
        return answer(message)
    }

    /// The answer to one parsed message.
    public func answer(_ message: JSONValue) -> JSONValue? {
        guard case .object(let members) = message else {
            return Self.error(.null, -32600, "invalid request: a JSON-RPC message is an object")
        }
        let id = members["id"]
        if let id {
            switch id {
            case .string, .int: break
            default: return Self.error(.null, -32600, "invalid request: id must be a string or an integer")
            }
        }
        guard let method = members["method"]?.string else {
            // A response to the server: it sends no requests, so there is nothing to match.
            if id != nil, members["result"] != nil || members["error"] != nil { return nil }
            return Self.error(id ?? .null, -32600, "invalid request: no method")
        }
        guard members["jsonrpc"]?.string == "2.0" else {
            return id.map { Self.error($0, -32600, "invalid request: jsonrpc must be \"2.0\"") }
        }
        let params = members["params"] ?? .object([:])
        guard case .object = params else {
            return id.map { Self.error($0, -32602, "invalid params: params must be an object") }
        }
        // A notification (initialized, cancelled): nothing to answer.
        guard let id else { return nil }
        do {
            return .object(["jsonrpc": .string("2.0"), "id": id, "result": try result(method, params)])
        } catch let failure as RequestError {
            return Self.error(id, failure.code, failure.message)
        } catch {
            return Self.error(id, -32603, "internal error: \(SystemErrorText.describe(error))")
        }
    }

    /// A JSON-RPC error the request gets.
    struct RequestError: Error {
        let code: Int
        let message: String
    }

    private func result(_ method: String, _ params: JSONValue) throws -> JSONValue {
        switch method {
        case "initialize":
            let asked = params["protocolVersion"]?.string ?? ""
            let version = Self.protocolVersions.contains(asked) ? asked : Self.protocolVersions[0]
            return .object([
                "protocolVersion": .string(version),
                "capabilities": .object([
                    "tools": .object(["listChanged": .bool(false)]),
                    "resources": .object(["listChanged": .bool(false), "subscribe": .bool(false)]),
                ]),
                "serverInfo": .object([
                    "name": .string("apimacro"), "title": .string("apimacro macros"),
                    "version": .string(MacroHostInfo.version),
                ]),
                "instructions": .string(
                    "Each tool runs one apimacro macro (a Python script calling web APIs through apimacro's "
                        + "clients, cache and rate-limit governor) and returns what it printed and the rows it gave."),
            ])
        case "ping":
            return .object([:])
        case "tools/list":
            let listed = tools.scan().tools.map { tool -> JSONValue in
                var annotations: [String: JSONValue] = ["openWorldHint": .bool(true)]
                if tool.writes != nil {
                    annotations["readOnlyHint"] = .bool(false)
                    annotations["destructiveHint"] = .bool(true)
                } else {
                    annotations["readOnlyHint"] = .bool(true)
                }
                return .object([
                    "name": .string(tool.name), "description": .string(tool.description),
                    "inputSchema": tool.inputSchema, "annotations": .object(annotations),
                ])
            }
            return .object(["tools": .array(listed)])
        case "tools/call":
            guard let name = params["name"]?.string else {
                throw RequestError(code: -32602, message: "invalid params: tools/call needs the tool's name")
            }
            slots.wait()
            defer { slots.signal() }
            switch tools.call(name, arguments: params["arguments"] ?? .object([:])) {
            case .unknown(let message): throw RequestError(code: -32602, message: message)
            case .result(let result): return result
            }
        case "resources/list":
            let listed = tools.resources().map { resource -> JSONValue in
                .object([
                    "uri": .string(resource.uri), "name": .string(resource.name),
                    "mimeType": .string(resource.mimeType),
                ])
            }
            return .object(["resources": .array(listed)])
        case "resources/templates/list":
            return .object(["resourceTemplates": .array([])])
        case "resources/read":
            guard let uri = params["uri"]?.string else {
                throw RequestError(code: -32602, message: "invalid params: resources/read needs a uri")
            }
            guard let (text, mimeType) = tools.read(uri) else {
                throw RequestError(code: -32002, message: "resource not found: \(uri) (resources/list lists them)")
            }
            return .object([
                "contents": .array([
                    .object(["uri": .string(uri), "mimeType": .string(mimeType), "text": .string(text)])
                ])
            ])
        default:
            throw RequestError(code: -32601, message: "method not found: \(String(method.prefix(100)))")
        }
    }

    /// A JSON-RPC error response.
    static func error(_ id: JSONValue, _ code: Int, _ message: String) -> JSONValue {
        .object([
            "jsonrpc": .string("2.0"), "id": id,
            "error": .object(["code": .int(Int64(code)), "message": .string(message)]),
        ])
    }
}
