import PythonBridge

/// Facts about this build of apimacro.
public enum MacroHostInfo {
    /// apimacro's version.
    public static var version: String { ApimacroModule.version }

    /// The built-in clients a macro finds in `apimacro` (`github`, …), as the registry lists them.
    public static var clients: [String] { ClientRegistry.objectNames }

    /// `major.minor` of the embedded Python, such as `3.11`.
    public static var pythonMinor: String { Interpreter.minorVersion }

    /// The embedded Python, such as `Python 3.11.2 (libpython3.11)`, without starting it.
    public static var python: String { "Python \(Interpreter.version) (libpython\(Interpreter.minorVersion))" }
}
