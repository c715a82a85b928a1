public import Foundation
import PythonBridge

/// What a macro's `main()` takes, read from its source without running it (so
/// `apimacro run` can tell its own options after the macro's name from the macro's).
public enum MacroSignature {
    /// The option flags of the `main()` in `file` (`--format`, `--no-cache`, ...), from
    /// `apimacro._main.option_flags`; empty when it has no `main` or the bundled package
    /// is missing.
    ///
    /// Starts Python (once per process) but does not load apimacro into it.
    public static func optionFlags(of file: URL) throws -> Set<String> {
        guard let source = FileManager.default.contents(atPath: file.path),
            let folder = PythonPackage.locate()
        else { return [] }
        let script = folder.appendingPathComponent("apimacro/_main.py")
        try Interpreter.start()
        return withGIL {
            do {
                // Loaded by path under a private name: importing the package would need `_apimacro`.
                let util = try Interpreter.import("importlib.util")
                let spec = try util.callMethod(
                    "spec_from_file_location", [PyRef(string: "_apimacro_signature"), PyRef(string: script.path)])
                let module = try util.callMethod("module_from_spec", [spec])
                // Registered first: its dataclasses look their module up in sys.modules.
                try Interpreter.import("sys").attribute("modules").setItem("_apimacro_signature", module)
                try spec.attribute("loader").callMethod("exec_module", [module])
                let flags = try module.callMethod(
                    "option_flags", [PythonValue.bytes(Array(source)).toPython(), PyRef(string: file.path)])
                guard case .list(let items) = try PythonValue(python: flags) else { return [] }
                return Set(items.compactMap { if case .string(let text) = $0 { text } else { nil } })
            } catch {
                PythonRaise.clear()
                return []
            }
        }
    }
}
