import Foundation
import FuzzSupport

@testable import PluginHost

/// libFuzzer entry: any bytes as a `plugin.toml`.
///
/// Reading must give a manifest or one `PluginError` naming the file (never a crash, a hang,
/// or an error of another kind), and a manifest that reads must build a client whose
/// endpoints can be described.
@main
enum Fuzzer {
    static func main() { runFuzzer(fuzzerTestOneInput) }
}

/// libFuzzer's callback (also exported under its C name for libFuzzer's own `main`).
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt { fuzzManifest(fuzzInput(data, size)) }

let folder = URL(fileURLWithPath: "/nonexistent/fuzz")

func fuzzManifest(_ input: UnsafeBufferPointer<UInt8>) -> CInt {
    let text = String(decoding: input, as: UTF8.self)
    do {
        let manifest = try ManifestReader(
            file: "fuzz/plugin.toml", reservedNames: ["github", "instagram", "shortener", "http"]
        ).read(text, folder: folder)
        precondition(ManifestReader.isIdentifier(manifest.name), "an invalid name was accepted: \(manifest.name)")
        _ = String(describing: manifest)
    } catch let error as PluginError {
        precondition(error.description.contains("fuzz/plugin.toml"), "the message does not name the file: \(error)")
    } catch {
        preconditionFailure("not a PluginError: \(error)")
    }
    return 0
}
