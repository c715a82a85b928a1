import Foundation
import PythonBridge

/// Finds the bundled pure-Python package `apimacro` and puts it on `sys.path`.
enum PythonPackage {
    /// Where the package may be, in order: next to the binary as SwiftPM lays
    /// out resources (`.build/debug`), then an installed layout
    /// (`PREFIX/bin/apimacro` with `PREFIX/share/apimacro/python/apimacro`).
    static func candidates(executable: URL) -> [URL] {
        let binDirectory = executable.resolvingSymlinksInPath().deletingLastPathComponent()
        return [
            binDirectory.appendingPathComponent("apimacro_MacroRuntime.resources"),
            binDirectory.deletingLastPathComponent().appendingPathComponent("share/apimacro/python"),
        ]
    }

    /// The folder to put on `sys.path` (it holds `apimacro/__init__.py`), if found.
    static func locate(executable: URL = PythonPackage.executable) -> URL? {
        candidates(executable: executable).first {
            FileManager.default.fileExists(atPath: $0.appendingPathComponent("apimacro/__init__.py").path)
        }
    }

    /// The running binary (the test bundle when running tests).
    static var executable: URL {
        if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            return URL(fileURLWithPath: path)
        }
        return URL(fileURLWithPath: CommandLine.arguments.first ?? "apimacro")
    }

    /// Puts the package on `sys.path` (GIL held). When it cannot be found, says
    /// so once on stderr and makes `import apimacro` give the native module, so
    /// macros that use only native parts keep working.
    static func install(warn: (String) -> Void) throws {
        let sys = try Interpreter.import("sys")
        let path = try sys.attribute("path")
        if let folder = locate() {
            try path.callMethod("insert", [PythonValue.int(0).toPython(), PyRef(string: folder.path)])
            return
        }
        let looked = candidates(executable: executable).map(\.path).joined(separator: ", ")
        warn(
            "apimacro: the bundled Python package was not found (looked in \(looked)); "
                + "macros get only the native module (no apimacro.output or main() arguments). Reinstall apimacro with its share/ folder."
        )
        let modules = try sys.attribute("modules")
        try modules.setItem("apimacro", Interpreter.import("_apimacro"))
    }
}
