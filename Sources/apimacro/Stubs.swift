import ArgumentParser
import MacroRuntime
import Platform

/// `apimacro stubs [--install]`.
struct Stubs: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stubs",
        abstract: "Type stubs of the apimacro module, for editors and type checkers (mypy, pyright).",
        discussion: """
            Without --install, prints where the stubs are and how to give them to mypy or pyright. \
            With --install, copies them into the active virtualenv (VIRTUAL_ENV) as the package \
            apimacro-stubs, where type checkers and editors find them with no setting; run it again \
            after upgrading apimacro. GitHub's answers are typed as the REST API version in use \
            describes them (apimacro.github_types): APIMACRO_GITHUB_API_VERSION, or \
            --github-api-version.
            """)

    @Flag(name: .long, help: "Install the stubs into the active virtualenv's site-packages (apimacro-stubs).")
    var install = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "With --install: type GitHub's answers as this REST API version describes them (2022-11-28 or 2026-03-10; default: APIMACRO_GITHUB_API_VERSION, else 2022-11-28).",
            valueName: "date"))
    var githubAPIVersion: String?

    func run() throws {
        guard install else {
            print(StubInstaller.howToAdd(try StubInstaller.folder()))
            return
        }
        let environment = ProcessInfo.processInfo.environment
        let version = githubAPIVersion ?? environment["APIMACRO_GITHUB_API_VERSION"].flatMap { $0.isEmpty ? nil : $0 }
        let installed = try StubInstaller(environment: environment).install(githubAPIVersion: version)
        print("installed apimacro's type stubs (apimacro \(MacroHostInfo.version)) in \(installed.path)")
    }
}
