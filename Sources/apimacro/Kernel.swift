import ArgumentParser
import MacroRuntime
import Platform

/// `apimacro kernel install`.
struct Kernel: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kernel",
        abstract: "The Jupyter kernel: plain ipykernel over the apimacro wheel (docs/guide/notebooks.md).",
        subcommands: [KernelInstall.self])
}

/// `apimacro kernel install [--user | --prefix PREFIX] [--python PATH]`.
struct KernelInstall: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "install",
        abstract: "Register the Jupyter kernelspec 'apimacro' of a Python holding the apimacro wheel.",
        discussion: """
            The kernel runs in that Python (the active virtualenv's, or --python), which needs the wheel \
            of scripts/package --wheel and ipykernel: it is IPython's kernel with import apimacro, the \
            %apimacro record/replay/live magics and rows shown as HTML tables. The kernelspec goes into \
            that Python's prefix, unless --user or --prefix says otherwise.
            """)

    @Flag(name: .long, help: "Install it for your user (Jupyter's user data folder).")
    var user = false

    @Option(
        name: .long, help: ArgumentHelp("Install it under PREFIX/share/jupyter/kernels.", valueName: "prefix"),
        completion: .directory)
    var prefix: String?

    @Option(
        name: .long,
        help: ArgumentHelp("The Python that runs the kernel (default: $VIRTUAL_ENV/bin/python).", valueName: "path"),
        completion: .file())
    var python: String?

    func validate() throws {
        if user, prefix != nil { throw ValidationError("--user and --prefix exclude each other") }
    }

    func run() async throws {
        let installer = try KernelInstaller(python: python, environment: ProcessInfo.processInfo.environment)
        let arguments = user ? ["--user"] : prefix.map { ["--prefix", $0] } ?? []
        let status = try await installer.install(arguments: arguments)
        if status != 0 { throw ExitCode(status) }
    }
}
