import PythonBridge

/// Facts about this build of apimacro.
public enum MacroHostInfo {
    /// apimacro's version.
    public static var version: String { ApimacroModule.version }

    /// The embedded Python, such as `Python 3.11.2 (libpython3.11)`, without starting it.
    public static var python: String { "Python \(Interpreter.version) (libpython\(Interpreter.minorVersion))" }
}
