import Clients
import PythonBridge

/// Turns JSON response bodies into Python objects: the native one-pass
/// parser (`JSONToPython`) for plain UTF-8 JSON, and CPython's own decoder
/// (`json.loads` on the bytes) for everything it declines, so errors and
/// unusual encodings read exactly as `json.loads` has them.
///
/// The native path takes 0.72× the instructions of `json.loads` on a 5 MB body
/// (Benchmarks/decode.sh).
final class JSONDecoding {
    /// `json.loads`, looked up at the first decode: a macro that makes no
    /// request does not pay for importing json (and re, enum) at start-up.
    private var loads: PyRef?

    init() {}

    /// The body as Python objects, or `ParseError` carrying the status, the
    /// URL and the first 4 KiB of the body.
    func decode(_ response: Response, api: String?) throws -> PyRef {
        if let fast = response.body.withUnsafeBufferPointer({ JSONToPython.parse($0) }) { return fast }
        let bytes = try PythonValue.bytes(response.body).toPython()
        let loads = try self.loads ?? Interpreter.import("json").attribute("loads")
        self.loads = loads
        do {
            return try loads.call([bytes])
        } catch is PythonErrorSet {
            let reason = PythonException.fetch()?.message ?? "invalid JSON"
            let preview = response.body.isEmpty ? "an empty body" : "a body that is not JSON"
            throw APIError(
                .parse, "\(response.url) answered \(response.status) with \(preview) (\(reason))",
                status: response.status, url: response.url, api: api, body: response.text)
        }
    }
}
