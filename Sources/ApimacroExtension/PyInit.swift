import MacroRuntime

/// The entry point `python3` calls when it imports `_apimacro` from the shared object
/// `_apimacro.cpython-311-x86_64-linux-gnu.so` (the wheel of `scripts/package --wheel`): the
/// same native module the binary builds, from the same targets, with the `apimacro` package
/// beside it in site-packages.
@_cdecl("PyInit__apimacro")
public func initializeApimacro() -> UnsafeMutableRawPointer? {
    ExtensionModule.initialize()
}
