import Platform
import PythonBridge
import WebAPI

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
            try Interpreter.exec(PythonPackage.source("_macro_help.py"), globals: globals)
            guard let helpOf = try globals.item("help_of") else { return [] }
            return files.map { file in
                let name = String(file.lastPathComponent.dropLast(3))
                let help: String
                do {
                    help = try String(pythonString: helpOf.call([PyRef(string: file.path)]))
                } catch {
                    // One bad file never breaks the list.
                    help = "(cannot read: \(PythonException.fetch()?.description ?? SystemErrorText.describe(error)))"
                }
                defer { seen.insert(name) }
                return Entry(name: name, path: file.path, help: help, shadowed: seen.contains(name))
            }
        }
    }

    /// `line` (a macro's name, help and path, which the macro's file chose) as it may be printed
    /// on stdout: with its control characters escaped on a terminal (`TerminalText`), so a
    /// docstring cannot drive the terminal.
    public static func shown(_ line: String) -> String {
        TerminalText.shown(line, on: STDOUT_FILENO)
    }

    /// The largest macro file `macros list` reads: 1 MiB.
    static let sizeLimit = 1 << 20
}
