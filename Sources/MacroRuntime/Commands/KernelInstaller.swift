import Platform
import Spawning

/// `apimacro kernel install`: registers the Jupyter kernelspec of the Python holding the apimacro
/// wheel and ipykernel (the kernel is plain ipykernel over the wheel, `python -m apimacro.kernel`),
/// by running that Python's `-m apimacro.kernel install`.
public struct KernelInstaller {
    /// The Python that runs the kernel.
    public let python: String
    /// The environment that Python runs with.
    let environment: [String: String]

    /// The Python `--python` names, else the active virtualenv's (`VIRTUAL_ENV`).
    ///
    /// - Throws: `MacroError` when neither is given or the file is no program.
    public init(python explicit: String?, environment: [String: String]) throws {
        self.environment = environment
        if let explicit {
            python = explicit
        } else if let venv = environment["VIRTUAL_ENV"], !venv.isEmpty {
            python = URL(fileURLWithPath: venv).appendingPathComponent("bin/python").path
        } else {
            throw MacroError(
                "no virtualenv is active (VIRTUAL_ENV is not set): activate the one holding the apimacro wheel "
                    + "(scripts/package --wheel) and ipykernel, or give --python PATH")
        }
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw MacroError("\(python) is not a program: give the python of the virtualenv holding the apimacro wheel")
        }
    }

    /// Checks that the Python has the wheel and ipykernel, then registers the kernelspec.
    ///
    /// `arguments`: `--user`, `--prefix PREFIX`, or none (the Python's own prefix). The Python's
    /// lines go to this process's stdout and stderr. Returns the exit status of its install.
    ///
    /// - Throws: `MacroError` when the wheel or ipykernel is missing there.
    public func install(arguments: [String]) async throws -> Int32 {
        // find_spec of top-level names imports nothing (a missing wheel is not an ImportError trace).
        let check =
            "import importlib.util as u, sys\n"
            + "sys.exit(3 if u.find_spec('_apimacro') is None else 4 if u.find_spec('ipykernel') is None else 0)"
        switch try await run(["-c", check], output: false) {
        case 0: break
        case 3:
            throw MacroError(
                "\(python) has no apimacro wheel (the module _apimacro): build it with scripts/package --wheel and "
                    + "\(python) -m pip install it")
        case 4: throw MacroError("\(python) has no ipykernel: \(python) -m pip install ipykernel")
        case let status: throw MacroError("\(python) could not be asked what it has installed (exit \(status))")
        }
        return try await run(["-m", "apimacro.kernel", "install"] + arguments, output: true)
    }

    private func run(_ arguments: [String], output: Bool) async throws -> Int32 {
        let process: Subprocess
        do {
            process = try Subprocess.spawn(
                python, arguments, environment: environment, stdout: output ? .descriptor(1) : .null,
                stderr: output ? .descriptor(2) : .null)
        } catch {
            throw MacroError(error.description)
        }
        switch await process.ended() {
        case .exited(let status): return status
        case .signaled(let signal): return 128 + signal
        }
    }
}
