import ArgumentParser
import Foundation
import MacroRuntime

/// `apimacro stubs [--install]`.
struct Stubs: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stubs",
        abstract: "Type stubs of the apimacro module, for editors and type checkers (mypy, pyright).",
        discussion: """
            Without --install, prints where the stubs are and how to give them to mypy or pyright. \
            With --install, copies them into the active virtualenv (VIRTUAL_ENV) as the package \
            apimacro-stubs, where type checkers and editors find them with no setting; run it again \
            after upgrading apimacro.
            """)

    @Flag(name: .long, help: "Install the stubs into the active virtualenv's site-packages (apimacro-stubs).")
    var install = false

    func run() throws {
        guard install else {
            print(StubInstaller.howToAdd(try StubInstaller.folder()))
            return
        }
        let installed = try StubInstaller(environment: ProcessInfo.processInfo.environment).install()
        print("installed apimacro's type stubs (apimacro \(MacroHostInfo.version)) in \(installed.path)")
    }
}
