import Foundation
import FuzzSupport
import WebAPI

/// libFuzzer entry: any bytes as a `--replay` HAR file (ours, or a browser's export).
///
/// Reading it must give a HAR or an `APIError`; replaying each recorded request must answer it
/// without a crash.
@main
enum Fuzzer {
    static func main() { runFuzzer(fuzzerTestOneInput) }
}

/// libFuzzer's callback (also exported under its C name for libFuzzer's own `main`).
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt { fuzzHAR(fuzzInput(data, size)) }

func fuzzHAR(_ input: UnsafeBufferPointer<UInt8>) -> CInt {
    let har: HAR
    do {
        har = try HAR.decode(Data(input), name: "fuzz.har")
    } catch let error as APIError {
        precondition(error.message.hasPrefix("fuzz.har is not a HAR file"), "unexpected message: \(error.message)")
        return 0
    } catch {
        preconditionFailure("not an APIError: \(error)")
    }
    let replay = HARReplay(har: har, name: "fuzz.har")
    let redactor = Redactor(secrets: ["fuzz-secret-token"])
    for entry in har.log.entries.prefix(50) {
        let body = Array((entry.request.postData?.text ?? "").utf8)
        let exchange = Exchange(
            method: entry.request.method, url: entry.request.url, headers: Headers(), body: body, timeout: 1)
        if let response = replay.answer(to: exchange, redactor: redactor) {
            precondition(response.source == .replay, "a replayed answer not marked as replay")
        }
    }
    return 0
}
