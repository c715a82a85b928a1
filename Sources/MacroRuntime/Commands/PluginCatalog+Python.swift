import Platform
public import PluginHost
import PythonBridge

extension PluginCatalog {
    /// Why a loaded plugin's `plugin.py` would fail when its client is first used: it cannot be
    /// read, or it does not compile (`SyntaxError: '(' was never closed (plugin.py, line 3)`).
    ///
    /// Nil when it compiles or the plugin has none. The file is compiled, never run.
    public static func pythonProblem(_ manifest: PluginManifest) -> String? {
        guard let file = manifest.pythonFile else { return nil }
        guard let source = FileManager.default.contents(atPath: file.path) else {
            return "\(file.path) cannot be read"
        }
        do {
            try Interpreter.start()
        } catch {
            return nil
        }
        return withGIL {
            do {
                _ = try Interpreter.compileFile(Array(source), filename: file.path)
                return nil
            } catch {
                let reason = PythonException.fetch()?.description ?? "\(error)"
                return "\(file.path) does not compile: \(reason)"
            }
        }
    }

    /// `plugins list`'s lines for the loaded plugins whose `plugin.py` does not compile; empty when none.
    public func pythonProblems() -> [String] {
        registry.plugins.compactMap { manifest in
            Self.pythonProblem(manifest).map { "  \(manifest.name): \($0)" }
        }
    }
}
