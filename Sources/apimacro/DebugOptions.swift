import ArgumentParser
import MacroRuntime

/// `run`'s debugging options: `--pdb`, `--debugpy [HOST:]PORT`, `--wait`, `--watch`.
struct DebugOptions: ParsableArguments {
    @Flag(
        name: .long,
        help: "When the macro raises: its traceback, then pdb post-mortem at the frame that raised (needs a terminal).")
    var pdb = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Let VS Code or another Debug Adapter Protocol client attach (debugpy from the active virtualenv; host 127.0.0.1 unless given).",
            valueName: "[host:]port"))
    var debugpy: String?

    @Flag(name: .long, help: "With --debugpy: start the macro only once a debugger has attached.")
    var wait = false

    @Flag(
        name: .long,
        help:
            "Run the macro again each time its file, or a module it imports from its folder, is saved (Ctrl-C stops).")
    var watch = false

    /// Checks the combinations; `file` tells whether the macro is a file (not -m, -c or -).
    func validate(every: String?, file: Bool) throws {
        if let debugpy, DebugAddress(debugpy) == nil {
            throw ValidationError(
                "--debugpy takes a port (5678) or host:port (0.0.0.0:5678, [::1]:5678), the port 1-65535; not '\(debugpy)'"
            )
        }
        if wait, debugpy == nil {
            throw ValidationError("--wait goes with --debugpy PORT: it waits for a debugger to attach")
        }
        if watch, every != nil {
            throw ValidationError(
                "--watch and --every cannot go together: --watch reruns on a save, --every on a clock")
        }
        if watch, !file {
            throw ValidationError("--watch needs a macro file to watch, not -m, -c or - (standard input)")
        }
    }

    /// What the options ask for, with `run`'s `-q`.
    func choices(quiet: Bool) -> DebugChoices {
        DebugChoices(pdb: pdb, address: debugpy.flatMap(DebugAddress.init), wait: wait, watch: watch, quiet: quiet)
    }
}

/// What `run`'s debugging options ask for (`DebugOptions`).
struct DebugChoices {
    var pdb = false
    /// `--debugpy`'s address.
    var address: DebugAddress?
    var wait = false
    var watch = false
    /// `-q`: no header line before each rerun of `--watch`.
    var quiet = false
}
