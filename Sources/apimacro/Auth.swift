import ArgumentParser
import Foundation
import MacroRuntime

/// `apimacro login NAME [--redirect-url URL | --listen PORT]`.
struct Login: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "login",
        abstract: "Log in to an API and store its token under $APIMACRO_HOME (mode 0600).",
        discussion: Logins.help)

    @Argument(help: "The client: \(Logins.namesInWords).", completion: .custom(Completions.loginNames))
    var name: String

    @Option(help: ArgumentHelp("The address the browser was redirected to, to finish a login.", valueName: "url"))
    var redirectURL: String?

    @Option(
        help: ArgumentHelp(
            "Serve the redirect on 127.0.0.1:PORT and wait for it (0: any free port).", valueName: "port"))
    var listen: Int?

    func validate() throws {
        if redirectURL != nil, listen != nil { throw ValidationError("give --redirect-url or --listen, not both") }
        if let listen, !(0...65535).contains(listen) { throw ValidationError("--listen needs a port from 0 to 65535") }
    }

    func run() async throws {
        let mode: Logins.Mode = redirectURL.map { .redirectURL($0) } ?? listen.map { .listen(port: $0) } ?? .paste
        try await Logins(settings: try Settings.load()).login(
            name, mode: mode,
            say: { line in
                // Unbuffered, so a test or a script reading our output sees the URL at once.
                FileHandle.standardOutput.write(Data((line + "\n").utf8))
            },
            prompt: { readLine() })
    }
}

/// `apimacro logout NAME`.
struct Logout: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "logout",
        abstract: "Remove a stored token (of \(Logins.namesInWords)).")

    @Argument(help: "The client: \(Logins.namesInWords).", completion: .custom(Completions.loginNames))
    var name: String

    func run() throws {
        let removed = try Logins(settings: try Settings.load()).logout(name)
        print(removed ? "\(name): logged out (stored token removed)." : "\(name): no stored token.")
    }
}

/// `apimacro auth status`.
struct Auth: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "auth",
        abstract: "Credentials: which clients have them and where from (never the secrets).", subcommands: [Status.self]
    )

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "status", abstract: "Which clients have credentials, and where from.")

        @Flag(
            help: "Ask each service who the credential belongs to (login, scopes or expiry), as gh auth status does.")
        var check = false

        func run() async throws {
            let logins = Logins(settings: try Settings.load())
            let lines = logins.status()
            let checks = check ? await logins.check(lines) : [:]
            // One width for the name column, so the second column lines up however long a plugin's name is.
            let width = lines.map(\.name.count).max() ?? 0
            for line in lines {
                let state = line.source.map { "credentials from \($0)" } ?? "no credentials"
                print(
                    "\(line.name.padding(toLength: width, withPad: " ", startingAt: 0))  \(state)\(line.problem.map { " — \($0)" } ?? "")"
                )
                if let result = checks[line.name] {
                    print("\(String(repeating: " ", count: width))    \(result)")
                }
            }
        }
    }
}
