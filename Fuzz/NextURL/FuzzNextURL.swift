import FuzzSupport
import WebAPI

/// libFuzzer entry: any bytes as an Instagram-style JSON body.
///
/// Reading `pagination.next_url` (and the `data` payload path) must not crash or hang,
/// whatever the body.
@main
enum Fuzzer {
    static func main() { runFuzzer(fuzzerTestOneInput) }
}

/// libFuzzer's callback (also exported under its C name for libFuzzer's own `main`).
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt { fuzzNextURL(fuzzInput(data, size)) }

func fuzzNextURL(_ input: UnsafeBufferPointer<UInt8>) -> CInt {
    let body = Array(input)
    let path = JSONPath.split("pagination.next_url")
    let found = JSONPath.string(in: body, path: path)
    _ = JSONPath.value(in: body, path: ["data"])
    _ = JSONPath.value(in: body, path: JSONPath.split("meta.error_message"))
    let response = Response(status: 200, headers: Headers([]), body: body, url: "https://api.instagram.com/v1/x")
    let next = Pagination.nextURL(path: path).next(
        after: response, request: Request("GET", "https://api.instagram.com/v1/x"), itemCount: 1)
    if let found, !found.isEmpty {
        precondition(next?.target == found, "next page differs from the body's next_url")
    } else {
        precondition(next == nil, "a next page without a next_url")
    }
    return 0
}
