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
    /// The tapes of the bodies the HTTP cache handed back last.
    let storedTapes = StoredBodyTapes()

    init(budget: Int = JSONToPython.defaultBudget) {
        self.budget = budget
    }

    /// The body as Python objects, or `ParseError` carrying the status, the
    /// URL and the first 4 KiB of the body.
    ///
    /// `tape`, when given, is `JSONTape.scan` of the body, made off the Python thread (a page
    /// fetched ahead): the objects are built from it, with the same answer. Without one, a body
    /// the HTTP cache handed back again (a hit, a 304) is built from the tape its first decode
    /// scanned (`StoredBodyTapes`), with the same answer too.
    func decode(_ response: Response, api: String?, tape: JSONTape? = nil) throws -> PyRef {
        let remembered = tape == nil ? storedTapes.remembered(response) : nil
        let outcome = response.body.withUnsafeBufferPointer { body in
            if let tape = remembered?.tape ?? tape { return JSONToPython.decode(body, tape: tape, budget: budget) }
            return JSONToPython.decode(body, budget: budget)
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

/// The tapes (`JSONTape.scan`) of the bodies the HTTP cache handed back last, each found by the
/// body's own storage.
///
/// A cache hit or a 304 answers with the stored entry's body, and while that entry is unchanged
/// the cache's own memo (`HTTPCache`: the entries it opened last, the lookups made since the
/// database last changed) hands back the very same array each time. Its tape, scanned at the
/// first decode, serves the later ones: a repeated hit or 304 builds its objects (new ones each
/// call: a caller may change what it got) and scans nothing. The build gives what the one-pass
/// parser gives, and charges the budget in its order (`JSONToPython.decode(_:tape:budget:)`).
///
/// Each tape keeps its body alive, so no other array can have that storage while it is here: a
/// body read anew (another process or connection stored another one, a 304 changed the entry, it
/// fell out of the cache's memo) is another array, scanned for itself; a tape is never used for
/// bytes other than its own. Only answers from the cache (a network answer's body is new every
/// time), of `smallest` to `largest` bytes, at most `capacity` of them, the least recently used
/// going first: the bounds of the cache's memo of opened entries. A body the scan leaves to the
/// one-pass parser is remembered as such (no tape), and parsed each time as before.
///
/// GIL held (as `JSONDecoding` is used).
final class StoredBodyTapes {
    /// How many bodies are remembered (as `HTTPCache` keeps its last opened entries).
    static let capacity = 16
    /// The largest body remembered, in bytes (the largest entry `HTTPCache` keeps opened).
    static let largest = 256 * 1024
    /// The smallest body remembered, in bytes: below it the one-pass parse costs less than a
    /// build from a tape (a 26-byte object: ~1 k instructions against ~2 k).
    static let smallest = 256

    /// One body and its tape.
    final class Remembered {
        /// The body, kept alive: its storage is what a later answer is recognised by.
        let body: [UInt8]
        let address: UnsafeRawPointer?
        /// Nil when the scan left the body to the one-pass parser.
        let tape: JSONTape?

        init(_ body: [UInt8], address: UnsafeRawPointer?, tape: JSONTape?) {
            self.body = body
            self.address = address
            self.tape = tape
        }
    }
    private var kept: [Remembered] = []

    /// How many bodies were scanned here (tests).
    private(set) var scans = 0

    /// What is remembered of `response`'s body when the cache answered it.
    ///
    /// The tape of that very body, else one scanned now and remembered; nil for a network answer
    /// or a body out of bounds.
    func remembered(_ response: Response) -> Remembered? {
        switch response.source {
        case .cacheHit, .revalidated, .sharedHit, .stale: break
        case .network, .replay: return nil
        }
        let count = response.body.count
        guard count >= Self.smallest, count <= Self.largest else { return nil }
        let address = response.body.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) }
        var index = kept.count
        while index > 0 {
            index -= 1
            let found = kept[index]
            guard found.address == address, found.body.count == count else { continue }
            if index != kept.count - 1 {
                kept.remove(at: index)
                kept.append(found)
            }
            return found
        }
        scans += 1
        let tape = response.body.withUnsafeBufferPointer { JSONTape.scan($0) }
        let found = Remembered(response.body, address: address, tape: tape)
        if kept.count >= Self.capacity { kept.removeFirst() }
        kept.append(found)
        return found
    }
}
