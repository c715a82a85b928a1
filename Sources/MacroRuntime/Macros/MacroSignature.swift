public import Platform
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
        let items = try call("option_flags", file)
        return Set(items.compactMap { if case .string(let text) = $0 { text } else { nil } })
    }

    /// One parameter of a macro's `main()` (`apimacro._main.parameters`).
    public struct Parameter: Sendable, Equatable {
        public var name: String
        /// "positional", the option's flag (`--user-name`), "*" or "**".
        public var passing: String
        public var required: Bool
        /// For a bool option taking no value: "false" (`--name` sets it), "true" (`--no-name`
        /// clears it), "none" (both); "" for any other parameter.
        public var flag: String
    }

    /// The parameters of the `main()` in `file`, in order; nil when it has no `main`.
    public static func parameters(of file: URL) throws -> [Parameter]? {
        let items = try call("parameters", file)
        let parameters = items.compactMap { item -> Parameter? in
            guard case .tuple(let fields) = item, fields.count == 4, case .string(let name) = fields[0],
                case .string(let passing) = fields[1], case .bool(let required) = fields[2],
                case .string(let flag) = fields[3]
            else { return nil }
            return Parameter(name: name, passing: passing, required: required, flag: flag)
        }
        return parameters.isEmpty ? nil : parameters
    }

    /// `apimacro._main.FUNCTION(source, path)`'s list; empty when the bundled package is missing.
    private static func call(_ function: String, _ file: URL) throws -> [PythonValue] {
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
                let result = try module.callMethod(
                    function, [PythonValue.bytes(Array(source)).toPython(), PyRef(string: file.path)])
                guard case .list(let items) = try PythonValue(python: result) else { return [] }
                return items
            } catch {
                PythonRaise.clear()
                return []
            }
        }
    }
}
