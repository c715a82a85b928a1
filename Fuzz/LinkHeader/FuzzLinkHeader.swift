import FuzzSupport
import WebAPI

/// libFuzzer entry: any bytes as a `Link` header.
///
/// The parser must not crash or hang, every URL it returns must come from the header, and the
/// pagination request built from it must be sound.
@main
enum Fuzzer {
    static func main() { runFuzzer(fuzzerTestOneInput) }
}

/// libFuzzer's callback (also exported under its C name for libFuzzer's own `main`).
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt { fuzzLinkHeader(fuzzInput(data, size)) }

func fuzzLinkHeader(_ input: UnsafeBufferPointer<UInt8>) -> CInt {
    let header = String(decoding: input, as: UTF8.self)
    let links = LinkHeader.parse(header)
    for (relation, url) in links {
        precondition(header.contains(url), "URL not from the header: \(url)")
        precondition(relation == relation.lowercased(), "relation not lower-cased: \(relation)")
    }
    let response = Response(
        status: 200, headers: Headers([("Link", header)]), body: [], url: "https://api.github.com/x")
    let request = Request("GET", "https://api.github.com/x")
    let next = Pagination.linkHeader.next(after: response, request: request, itemCount: 1)
    precondition(next?.target == links["next"], "next page differs from rel=next")
    return 0
}
