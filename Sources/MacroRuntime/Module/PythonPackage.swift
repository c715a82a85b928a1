import Platform
import PythonBridge
import Synchronization
import WebAPI

/// Finds the bundled pure-Python package `apimacro` and puts it on `sys.path`.
enum PythonPackage {
    /// Where the package may be, in order: an installed layout (`PREFIX/bin/apimacro` with
    /// `PREFIX/share/apimacro/python/apimacro`), then the checkout the binary was built from
    /// (`Sources/MacroRuntime/Python`, for `.build/debug`, `.build/release` and copies of them).
    ///
    /// The package is not a SwiftPM resource: SwiftPM's generated `Bundle.module` accessor
    /// imports `Foundation`, which would link Foundation proper and its ICU data (34 MB) into
    /// the binary. (Nor is the `apimacro_MacroRuntime.resources` folder beside the binary
    /// looked in any more, where builds made before left a copy that would shadow the checkout.)
    static func candidates(executable: URL) -> [URL] {
        let binDirectory = executable.resolvingSymlinksInPath().deletingLastPathComponent()
        return [
            binDirectory.deletingLastPathComponent().appendingPathComponent("share/apimacro/python"),
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Python"),
        ]
    }

    /// The folder holding the package when apimacro is the extension module of another
    /// program's Python (`ExtensionModule`): site-packages, set once before anything reads it.
    nonisolated(unsafe) static var folder: URL?

    /// The folder to put on `sys.path` (it holds `apimacro/__init__.py`), if found.
    ///
    /// Looked for once (a run reads several of the package's files); not found is looked for again.
    static func locate() -> URL? {
        if let folder { return folder }
        return found.withLock { found in
            if let found { return found }
            found = candidates(executable: executable).first {
                FileManager.default.fileExists(atPath: $0.appendingPathComponent("apimacro/__init__.py").path)
            }
            return found
        }
    }

    /// The package folder, once found.
    private static let found = Mutex<URL?>(nil)

    /// The running binary (the test bundle when running tests).
    static var executable: URL {
        if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            return URL(fileURLWithPath: path)
        }
        return URL(fileURLWithPath: CommandLine.arguments.first ?? "apimacro")
    }

    /// Puts the package on `sys.path` (GIL held).
    /// - Throws: `MacroError` when the package cannot be found.
    static func install() throws {
        let folder = try located()
        let path = try Interpreter.import("sys").attribute("path")
        try path.callMethod("insert", [PythonValue.int(0).toPython(), PyRef(string: folder.path)])
    }

    /// The text of the package's file `name` (`_native_helpers.py`): Python the host executes
    /// itself, kept in `.py` files where the Python tests and linters see it.
    /// - Throws: `MacroError` when the package or the file cannot be read.
    static func source(_ name: String) throws -> String {
        let file = try located().appendingPathComponent("apimacro").appendingPathComponent(name)
        do {
            return try String(contentsOf: file, encoding: .utf8)
        } catch {
            throw MacroError(
                "cannot read \(file.path), part of apimacro's bundled Python package: \(SystemErrorText.reason(error)); reinstall apimacro"
            )
        }
    }

    /// The package's folder, or a `MacroError` saying where it was looked for.
    private static func located() throws -> URL {
        if let folder = locate() { return folder }
        let looked = candidates(executable: executable).map(\.path).joined(separator: ", ")
        throw MacroError(
            "the bundled Python package was not found (looked in \(looked)); reinstall apimacro with its share/ folder")
    }
}
