public import Platform

/// What `apimacro run` runs, as `python3` takes it: a file, `-c CODE`, `-` (standard input)
/// or `-m MODULE`.
public enum MacroSource: Sendable, Equatable {
    /// A macro file: `sys.argv[0]` is its path, its folder is `sys.path[0]`.
    case file(URL)
    /// `-c CODE`: `sys.argv[0]` is `-c`, the working directory is `sys.path[0]`.
    case code(String)
    /// `-`: the macro read from standard input; `sys.argv[0]` is `-`.
    case standardInput
    /// `-m MODULE`: the module run as `__main__` with `runpy` (as `python3 -m` does);
    /// `sys.argv[0]` is its file.
    case module(String)

    /// Whether this is a macro file.
    var isFile: Bool {
        if case .file = self { return true }
        return false
    }

    /// `sys.argv[0]` before the macro runs.
    var argumentZero: String {
        switch self {
        case .file(let url): url.path
        case .code: "-c"
        case .standardInput: "-"
        case .module: "-m"
        }
    }

    /// The file name the macro's code is compiled with (what tracebacks show): nil for a module,
    /// whose file `runpy` finds.
    var filename: String? {
        switch self {
        case .file(let url): url.path
        case .code: "<string>"
        case .standardInput: "<stdin>"
        case .module: nil
        }
    }
}
