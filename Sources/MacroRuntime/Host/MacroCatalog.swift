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
            return files.map { file in
                let name = String(file.lastPathComponent.dropLast(3))
                let help: String
                do {
                    help = try String(pythonString: helpOf.call([PyRef(string: file.path)]))
                } catch {
                    // One bad file never breaks the list.
                    help = "(cannot read: \(PythonException.fetch()?.description ?? String(describing: error)))"
                }
                defer { seen.insert(name) }
                return Entry(name: name, path: file.path, help: help, shadowed: seen.contains(name))
            }
        }
    }

    /// The largest macro file `macros list` reads: 1 MiB.
    static let sizeLimit = 1 << 20

    /// Reads the help without running the macro; a file that does not parse says so. Only
    /// regular files up to 1 MiB are read, opened without blocking (a FIFO, a device or a
    /// symlink to /dev/zero is listed as unreadable, with the reason).
    static let helpSource = #"""
        import ast, os, stat

        LIMIT = 1 << 20

        def _read(path):
            info = os.stat(path)
            if not stat.S_ISREG(info.st_mode):
                raise ValueError("not a regular file")
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, 'O_CLOEXEC', 0))
            try:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    raise ValueError("not a regular file")
                chunks, size = [], 0
                while size <= LIMIT:
                    chunk = os.read(fd, 65536)
                    if not chunk:
                        break
                    chunks.append(chunk)
                    size += len(chunk)
            finally:
                os.close(fd)
            if size > LIMIT:
                raise ValueError("larger than 1 MiB")
            return b"".join(chunks)

        def help_of(path):
            try:
                tree = ast.parse(_read(path), path)
            except SyntaxError as error:
                return f"(does not parse: {error.msg}, line {error.lineno})"
            except OSError as error:
                return f"(cannot read: {error.strerror})"
            except ValueError as error:
                return f"(cannot read: {error})"
            doc = ast.get_docstring(tree)
            if not doc:
                for node in tree.body:
                    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == 'main':
                        doc = ast.get_docstring(node)
            lines = [line.strip() for line in (doc or '').splitlines() if line.strip()]
            return lines[0] if lines else ''
        """#
}
