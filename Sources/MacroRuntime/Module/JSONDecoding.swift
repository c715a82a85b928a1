import Clients
import PythonBridge
import WebAPI

/// Turns JSON response bodies into Python objects: the native one-pass
/// parser (`JSONToPython`) for plain UTF-8 JSON, and CPython's own decoder
/// (`json.loads` on the bytes) for everything it declines, so errors and
/// unusual encodings read exactly as `json.loads` has them.
///
/// The native path takes 0.72× the instructions of `json.loads` on a 5 MB body
/// (Benchmarks/decode.sh).
///
/// What one body may build is bounded whichever path decodes it: past `budget` (estimated
/// bytes of Python objects, `JSONToPython.decode`) or 512 levels of nesting it is a
/// `ParseError`, never a fall-back to `json.loads`, which has no bound. A body in another
/// encoding (UTF-16, UTF-32, a BOM) is re-encoded as UTF-8 first, so it meets the same bound;
/// `json.loads` sees only malformed documents, for its error message, and stops where the
/// native parse stopped.
final class JSONDecoding {
    /// `json` (for `loads` and `detect_encoding`), imported at the first decode that needs it: a
    /// macro that makes no request does not pay for importing json (and re, enum) at start-up.
    private var json: PyRef?
    /// The most one body may build (`JSONToPython.defaultBudget`, 256 MiB).
    let budget: Int

    init(budget: Int = JSONToPython.defaultBudget) {
        self.budget = budget
    }

    /// The body as Python objects, or `ParseError` carrying the status, the
    /// URL and the first 4 KiB of the body.
    ///
    /// `tape`, when given, is `JSONTape.scan` of the body, made off the Python thread (a page
    /// fetched ahead): the objects are built from it, with the same answer.
    func decode(_ response: Response, api: String?, tape: JSONTape? = nil) throws -> PyRef {
        let outcome = response.body.withUnsafeBufferPointer { body in
            tape.map { JSONToPython.decode(body, tape: $0, budget: budget) }
                ?? JSONToPython.decode(body, budget: budget)
        }
        if let value = try take(outcome, response, api: api) { return value }
        let bytes = try PythonValue.bytes(response.body).toPython()
        let json = try self.json ?? Interpreter.import("json")
        self.json = json
        if !response.body.withUnsafeBufferPointer(JSONToPython.takesFastPath),
            let utf8 = try? reencoded(bytes, json: json)
        {
            let again = utf8.withUnsafeBufferPointer { JSONToPython.decode($0, budget: budget) }
            if let value = try take(again, response, api: api) { return value }
        }
        PythonRaise.clear()
        do {
            return try json.attribute("loads").call([bytes])
        } catch is PythonErrorSet {
            let reason = PythonException.fetch()?.message ?? "invalid JSON"
            let preview = response.body.isEmpty ? "an empty body" : "a body that is not JSON"
            throw APIError(
                .parse, "\(response.url) answered \(response.status) with \(preview) (\(reason))",
                status: response.status, url: response.url, api: api, body: Self.preview(response))
        }
    }

    /// The value of `outcome`, nil when it was declined; a refusal is a `ParseError`.
    private func take(_ outcome: JSONToPython.Outcome, _ response: Response, api: String?) throws -> PyRef? {
        switch outcome {
        case .value(let value):
            return value
        case .declined:
            return nil
        case .refused(let refusal):
            let size = Self.mebibytes(response.body.count)
            let why =
                switch refusal {
                case .budget(let limit):
                    "its Python objects would take more than \(Self.mebibytes(limit)), apimacro's bound for one body"
                case .depth(let levels): "it nests deeper than \(levels) levels"
                }
            throw APIError(
                .parse,
                "\(response.url) answered \(response.status) with JSON (\(size)) that apimacro does not decode: "
                    + "\(why). To decode it anyway, call json.loads on the response's content yourself",
                status: response.status, url: response.url, api: api, body: Self.preview(response))
        }
    }

    /// The body (`bytes`, a Python `bytes`) in UTF-8, read as `json.loads` reads bytes
    /// (`json.detect_encoding`, lone surrogates kept); nil when its text starts with a BOM
    /// (which `json.loads` refuses) — throws when it cannot be decoded.
    private func reencoded(_ bytes: PyRef, json: PyRef) throws -> [UInt8]? {
        let encoding = try json.attribute("detect_encoding").call([bytes])
        let text = try bytes.callMethod("decode", [encoding, PyRef(string: "surrogatepass")])
        let utf8 = try text.callMethod("encode", [PyRef(string: "utf-8"), PyRef(string: "surrogatepass")])
        guard case .bytes(let bytes) = try PythonValue(python: utf8) else { return nil }
        return bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? nil : bytes
    }

    /// The start of the body, as much as an `APIError` keeps: a body of many MiB is not made
    /// into one `String` only to be cut to 4 KiB.
    static func preview(_ response: Response) -> String {
        String(decoding: response.body.prefix(APIError.bodyLimit), as: UTF8.self)
    }

    /// "256 MiB", "31.4 MiB", "0.1 MiB".
    static func mebibytes(_ bytes: Int) -> String {
        if bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB" }
        let tenths = (bytes * 10 + (1 << 19)) >> 20
        return "\(tenths / 10).\(tenths % 10) MiB"
    }
}
