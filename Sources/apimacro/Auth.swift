import ArgumentParser
import Foundation
import MacroRuntime

/// `apimacro login NAME [--redirect-url URL | --listen PORT | --token -]`.
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

    @Option(
        help: ArgumentHelp(
            "Store a token read from standard input (give -), such as one the provider's dashboard generated.",
            valueName: "-"))
    var token: String?

    func validate() throws {
        if [redirectURL != nil, listen != nil, token != nil].filter({ $0 }).count > 1 {
            throw ValidationError("give one of --redirect-url, --listen and --token")
        }
        if let listen, !(0...65535).contains(listen) { throw ValidationError("--listen needs a port from 0 to 65535") }
        if let token, token != "-" {
            throw ValidationError(
                "--token takes - and reads the token from standard input (a token on the command line would "
                    + "show in ps and the shell's history)")
        }
    }

    func run() async throws {
        // Unbuffered, so a test or a script reading our output sees the URL at once.
        let say: @Sendable (String) -> Void = { line in FileHandle.standardOutput.write(Data((line + "\n").utf8)) }
        let logins = Logins(settings: try Settings.load())
        if token != nil {
            return try logins.store(token: readLine(strippingNewline: true) ?? "", for: name, say: say)
        }
        let mode: Logins.Mode = redirectURL.map { .redirectURL($0) } ?? listen.map { .listen(port: $0) } ?? .paste
        try await logins.login(name, mode: mode, say: say, prompt: { readLine() })
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

    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "status", abstract: "Which clients have credentials, and where from.")

        func run() throws {
            let lines = Logins(settings: try Settings.load()).status()
            // One width for the name column, so the second column lines up however long a plugin's name is.
            let width = lines.map(\.name.count).max() ?? 0
            for line in lines {
                let state = line.source.map { "credentials from \($0)" } ?? "no credentials"
                print(
                    "\(line.name.padding(toLength: width, withPad: " ", startingAt: 0))  \(state)\(line.problem.map { " — \($0)" } ?? "")"
                )
            }
        }
    }
}
