import Foundation

/// libFuzzer's entry for programs that have a `main` of their own (SwiftPM renames each
/// executable's `main`, so libFuzzer's cannot be used).
@_silgen_name("LLVMFuzzerRunDriver")
private func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

/// Runs libFuzzer with the process's arguments (`-max_total_time=…`, corpus folders) on `callback`,
/// then exits with libFuzzer's status.
public func runFuzzer(_ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> Never {
    var argc = CommandLine.argc
    var argv = CommandLine.unsafeArgv
    exit(runFuzzerDriver(&argc, &argv, callback))
}

/// The input as a buffer (libFuzzer passes a null pointer for the empty input).
public func fuzzInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> UnsafeBufferPointer<UInt8> {
    UnsafeBufferPointer(start: data, count: data == nil ? 0 : size)
}
