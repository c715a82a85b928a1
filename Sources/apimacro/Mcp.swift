import ArgumentParser
import MacroRuntime
import Platform

/// `apimacro mcp`: the macros as tools for AI assistants (the Model Context Protocol).
struct Mcp: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mcp",
        abstract: "Serve the macros as tools for AI assistants (Model Context Protocol) over stdio or loopback HTTP.",
        discussion: """
            Each macro on the macro path (./macros/, $APIMACRO_HOME/macros/, then each plugin's macros/) \
            is a tool: its input schema comes from main()'s typed parameters, its description from its \
            docstring; a call returns what the macro printed and the rows it gave (apimacro.output, \
            main()'s return value). Macros and plugin manifests are also resources.

            Read-only by default: a macro that writes (a docstring line "Writes: ...", \
            @apimacro.writes on main, or a call to .post/.put/.patch/.delete, request("POST", ...) \
            or a plugin endpoint that is not GET) is offered only with --allow-writes, marked destructive.

            Every call goes through the same clients as apimacro run: credentials, cache, rate-limit \
            governor, redaction, --record/--replay; --timeout applies to each call. The interpreter \
            stays warm; each call gets a fresh module namespace. Guide: docs/guide/mcp.md.
            """)

    @Flag(name: .long, help: "Offer the macros that write too (marked destructive).")
    var allowWrites = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Serve the streamable HTTP transport at http://ADDRESS/mcp instead of stdio (127.0.0.1:PORT; 0 picks a free port).",
            valueName: "address"))
    var http: String?

    @Option(
        name: .customLong("jobs"), help: ArgumentHelp("Tool calls run at once, at most.", valueName: "n"))
    var jobs = 4

    @Option(name: .long, help: ArgumentHelp("Stop each call after this many seconds.", valueName: "seconds"))
    var timeout: Double?

    @OptionGroup var exchange: ExchangeOptions

    func validate() throws {
        guard (1...64).contains(jobs) else { throw ValidationError("--jobs takes 1 to 64 calls, not \(jobs)") }
    }

    func run() throws {
        let settings = try exchange.settings(timeout: timeout, color: "never")
        // The address checked before Python starts: a bad one is a usage error at once.
        let port = try http.map(McpHTTP.port(of:))
        let host = try MacroHost(settings: settings)
        let server = try McpServer(host: host, allowWrites: allowWrites, jobs: jobs)
        MacroHost.standardError(server.summary())
        let ending: ExitReport
        if let port {
            ending = try McpHTTP(server: server, port: port).serve { url in
                MacroHost.standardError("apimacro mcp: serving \(url)")
            }
        } else {
            ending = McpStdio(server: server).serve()
        }
        if ending != .success { throw ending }
    }
}
