import Foundation
import PythonBridge

/// `apimacro macros list`: every macro on the macro path with its one-line
/// help, read with `ast` (the macro is never run).
public struct MacroCatalog: Sendable {
    /// One macro found on the path.
    public struct Entry: Sendable, Equatable {
        public let name: String
        public let path: String
        /// The first line of the module's docstring, else of `main`'s; or why it could not be read.
        public let help: String
        /// Whether a folder earlier on the path has a macro of the same name.
        public let shadowed: Bool
    }

    let locator: MacroLocator

    public init(settings: Settings) {
        locator = MacroLocator(settings: settings)
    }

    /// The macros, folder by folder in lookup order, names sorted within a folder.
    public func entries() throws -> [Entry] {
        try Interpreter.start()
        let files = locator.searchPath.flatMap { folder in
            ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
                .filter { $0.hasSuffix(".py") && !$0.hasPrefix("_") }.sorted()
                .map { folder.appendingPathComponent($0) }
        }
        var seen = Set<String>()
        return try withGIL {
            let globals = try Interpreter.newGlobals()
            try Interpreter.exec(MacroCatalog.helpSource, globals: globals)
            guard let helpOf = try globals.item("help_of") else { return [] }
            return try files.map { file in
                let name = String(file.lastPathComponent.dropLast(3))
                let help = try String(pythonString: helpOf.call([PyRef(string: file.path)]))
                defer { seen.insert(name) }
                return Entry(name: name, path: file.path, help: help, shadowed: seen.contains(name))
            }
        }
    }

    /// Reads the help without running the macro; a file that does not parse says so.
    static let helpSource = #"""
        import ast

        def help_of(path):
            try:
                with open(path, 'rb') as handle:
                    tree = ast.parse(handle.read(), path)
            except SyntaxError as error:
                return f"(does not parse: {error.msg}, line {error.lineno})"
            except OSError as error:
                return f"(cannot read: {error.strerror})"
            doc = ast.get_docstring(tree)
            if not doc:
                for node in tree.body:
                    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == 'main':
                        doc = ast.get_docstring(node)
            lines = [line.strip() for line in (doc or '').splitlines() if line.strip()]
            return lines[0] if lines else ''
        """#
}
