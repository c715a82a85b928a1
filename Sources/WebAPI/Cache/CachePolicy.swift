import Platform

/// The HTTP cache's decisions (RFC 9111, as a private cache): what may be
/// stored, how old a stored response is, whether it may answer a request,
/// which validators to send, how a 304 updates it and what an unsafe method
/// invalidates.
///
/// Pure: no I/O, the clock passed in, so every rule is tested without a server
/// (`CachePolicyTests`).
///
/// Not followed, on purpose: heuristic freshness (§4.2.2: an API answer with no
/// freshness information is revalidated, never guessed fresh) and the rules
/// for shared caches only (`s-maxage`, `proxy-revalidate`, `public`/`private`
/// restrictions, §3.5 on `Authorization`): this cache belongs to one user.
public enum CachePolicy {
    /// A stored response, as the decisions need it.
    public struct Stored: Sendable, Equatable {
        public var status: Int
        public var headers: Headers {
            didSet { parsed = nil }
        }
        /// `directives(headers)`, when the entry it came from had them parsed already (a stored
        /// entry opened once keeps them: a hit does not parse its `Cache-Control` again).
        var parsed: [String: String]?
        /// When the response was received (or last revalidated): `response_time` of §4.2.3.
        public var storedAt: Double
        /// Its `corrected_initial_age` (§4.2.3) at `storedAt`.
        public var initialAge: Double

        public init(status: Int, headers: Headers, storedAt: Double, initialAge: Double) {
            self.status = status
            self.headers = headers
            self.storedAt = storedAt
            self.initialAge = initialAge
        }

        public static func == (lhs: Stored, rhs: Stored) -> Bool {
            lhs.status == rhs.status && lhs.storedAt == rhs.storedAt && lhs.initialAge == rhs.initialAge
                && lhs.headers.fields.map { "\($0.name): \($0.value)" }
                    == rhs.headers.fields.map { "\($0.name): \($0.value)" }
        }
    }

    /// What to do with a request, given what is stored.
    public enum Decision: Equatable, Sendable {
        /// Answer with the stored response, this many seconds old (its `Age`).
        /// `stale` says it is past its freshness lifetime (allowed by `max-stale` or `--offline`).
        case serve(age: Double, stale: Bool)
        /// Ask the server with these conditional headers; a 304 means "serve it".
        case revalidate([String: String])
        /// Ask the server plainly (nothing stored, or nothing to validate with).
        case fetch
        /// `only-if-cached` (§5.2.1.7) and nothing stored fits: answer 504 without the network.
        case unsatisfiable
    }

    /// A request's `Cache-Control` directives (§5.2.1), and `Pragma: no-cache` (§5.4).
    public struct RequestDirectives: Sendable, Equatable {
        public var maxAge: Double?
        /// `max-stale`: nil when absent, `.infinity` without a value.
        public var maxStale: Double?
        public var minFresh: Double?
        public var noCache = false
        public var noStore = false
        public var onlyIfCached = false

        public init(_ headers: Headers) {
            let parsed = CachePolicy.directives(headers)
            maxAge = parsed["max-age"].map { CachePolicy.deltaSeconds($0) ?? 0 }
            if let value = parsed["max-stale"] {
                maxStale = value.isEmpty ? .infinity : CachePolicy.deltaSeconds(value) ?? 0
            }
            minFresh = parsed["min-fresh"].map { CachePolicy.deltaSeconds($0) ?? .infinity }
            noStore = parsed["no-store"] != nil
            onlyIfCached = parsed["only-if-cached"] != nil
            let pragma = headers.values("Pragma").contains { $0.lowercased().contains("no-cache") }
            noCache = parsed["no-cache"] != nil || (pragma && headers.values("Cache-Control").isEmpty)
        }
    }

    // MARK: - Storing (§3)

    /// Statuses that are heuristically cacheable (RFC 9110 §15.1): stored even without explicit
    /// freshness (they are then revalidated every time, and serve `--offline` and stale-if-error).
    public static let heuristicallyCacheable: Set<Int> = [200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501]

    /// Whether a response may be stored (§3): a GET; a final status the cache understands (not
    /// 206, whose ranges it does not combine, nor 304); no `no-store` on either side; not
    /// `Vary: *`; and explicit freshness (`max-age`, `Expires`), or `public`/`private`, or a
    /// heuristically cacheable status.
    public static func isStorable(method: String, requestHeaders: Headers, status: Int, responseHeaders: Headers)
        -> Bool
    {
        guard method == "GET", (200...599).contains(status), status != 206, status != 304 else { return false }
        let response = directives(responseHeaders)
        if RequestDirectives(requestHeaders).noStore || response["no-store"] != nil { return false }
        if varyNames(responseHeaders).contains("*") { return false }
        let explicit =
            response["max-age"] != nil || !responseHeaders.values("Expires").isEmpty || response["public"] != nil
            || response["private"] != nil
        return explicit || heuristicallyCacheable.contains(status)
    }

    /// Whether the request asks not to use the cache at all (`Cache-Control: no-store`).
    public static func bypasses(requestHeaders: Headers) -> Bool {
        RequestDirectives(requestHeaders).noStore
    }

    // MARK: - Age and freshness (§4.2)

    /// `corrected_initial_age` (§4.2.3) of a response asked for at `requestTime`
    /// and received at `responseTime`: the larger of the age its `Date` implies and
    /// its `Age` plus the time the exchange took.
    public static func initialAge(_ headers: Headers, requestTime: Double, responseTime: Double) -> Double {
        let ageValue = age(headers) ?? 0
        let dateValue = date(headers) ?? responseTime
        let apparentAge = max(0, responseTime - dateValue)
        let correctedAgeValue = ageValue + max(0, responseTime - requestTime)
        return max(apparentAge, correctedAgeValue)
    }

    /// `current_age` (§4.2.3) at `now`.
    public static func currentAge(_ stored: Stored, now: Double) -> Double {
        stored.initialAge + max(0, now - stored.storedAt)
    }

    /// The `Age` field (§5.1): the first member of a list, a non-negative integer, else ignored (nil).
    public static func age(_ headers: Headers) -> Double? {
        guard let first = headers["Age"] else { return nil }
        let member = first.split(separator: ",", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return deltaSeconds(member.trimmingWhitespace())
    }

    /// The `Date` field, when there is exactly one valid one.
    static func date(_ headers: Headers) -> Double? {
        // Counted as it is looked for (no array of the values: every 304 asks).
        var found: String?
        for field in headers.fields where Headers.sameName(field.name, "Date") {
            guard found == nil else { return nil }
            found = field.value
        }
        return found.flatMap { HTTPDate.parse($0) }
    }

    /// How long a response stays fresh, in seconds (§4.2.1): `max-age`, else `Expires`
    /// minus `Date` (or minus `responseTime` without a valid `Date`); 0 for an `Expires` that is
    /// malformed or sent more than once (§5.3: already expired); nil without either (no
    /// heuristic freshness: API data changes, so an unlabelled answer is revalidated).
    public static func freshnessLifetime(_ headers: Headers, responseTime: Double = 0) -> Double? {
        freshnessLifetime(headers, directives: directives(headers), responseTime: responseTime)
    }

    /// `freshnessLifetime` with the response's `Cache-Control` already parsed.
    static func freshnessLifetime(_ headers: Headers, directives response: [String: String], responseTime: Double)
        -> Double?
    {
        if let maxAge = response["max-age"] { return deltaSeconds(maxAge) ?? 0 }
        let expires = headers.values("Expires")
        guard !expires.isEmpty else { return nil }
        guard expires.count == 1, let expiry = HTTPDate.parse(expires[0]) else { return 0 }
        return max(0, expiry - (date(headers) ?? responseTime))
    }

    /// Whether the origin forbids serving this response stale (§4.2.4): `must-revalidate`
    /// (§5.2.2.2) or `no-cache` (§5.2.2.4).
    public static func forbidsStale(_ headers: Headers) -> Bool {
        forbidsStale(directives: directives(headers))
    }

    /// `forbidsStale` with the response's `Cache-Control` already parsed.
    static func forbidsStale(directives response: [String: String]) -> Bool {
        response["must-revalidate"] != nil || response["no-cache"] != nil
    }

    /// Decides between answering from `stored` and asking the server (§4, §5.2).
    ///
    /// - Parameters:
    ///   - request: the request's headers (their `Cache-Control` directives count).
    ///   - stored: the stored response for this request, or nil when there is none.
    ///   - now: the current time, seconds since 1970.
    ///   - disconnected: `--offline`: a stale copy may answer unless the origin forbade it.
    /// - Returns: serve the stored copy, revalidate it, fetch plainly, or answer 504 (`only-if-cached`).
    public static func decide(request: Headers, stored: Stored?, now: Double, disconnected: Bool = false) -> Decision {
        decision(asked: RequestDirectives(request), stored: stored, now: now, disconnected: disconnected).decision
    }

    /// `decide` for a request whose directives are `asked`, and whether its answer holds at every
    /// clock (`timeless`): a stored response that cannot be served now, and could be at no other
    /// time either (`no-cache` on either side, `max-age=0` asked, or no freshness lifetime and no
    /// `max-stale`), is revalidated or fetched with the conditions its own headers give, so the
    /// answer depends on nothing but `asked`, the stored headers and `disconnected`.
    static func decision(asked: RequestDirectives, stored: Stored?, now: Double, disconnected: Bool)
        -> (decision: Decision, timeless: Bool)
    {
        guard let stored else { return (asked.onlyIfCached ? .unsatisfiable : .fetch, false) }
        let age = currentAge(stored, now: now)
        // The stored response's directives, parsed once for every rule below.
        let response = stored.parsed ?? directives(stored.headers)
        let lifetime = freshnessLifetime(stored.headers, directives: response, responseTime: stored.storedAt) ?? 0
        let fresh = age < lifetime
        let mustValidate = asked.noCache || response["no-cache"] != nil
        let staleAllowed = !forbidsStale(directives: response)
        var usable = !mustValidate
        if let maxAge = asked.maxAge, maxAge == 0 || age > maxAge { usable = false }
        if usable {
            if fresh {
                if let minFresh = asked.minFresh, lifetime - age < minFresh { usable = false }
            } else {
                usable = staleAllowed && (asked.maxStale.map { age - lifetime <= $0 } ?? false)
            }
        }
        if usable { return (.serve(age: age, stale: !fresh), false) }
        if disconnected && staleAllowed { return (.serve(age: age, stale: !fresh), false) }
        if asked.onlyIfCached { return (.unsatisfiable, false) }
        // Fresh at no clock: the age is never below 0, so never below a lifetime of 0.
        let neverFresh = lifetime <= 0 && stored.initialAge >= 0
        let timeless = mustValidate || asked.maxAge == 0 || (neverFresh && asked.maxStale == nil)
        var conditions: [String: String] = [:]
        if let etag = stored.headers["ETag"] { conditions["If-None-Match"] = etag }
        if let modified = stored.headers["Last-Modified"] { conditions["If-Modified-Since"] = modified }
        return (conditions.isEmpty ? .fetch : .revalidate(conditions), timeless)
    }

    /// Whether a stored copy may stand in for a failed exchange (stale-if-error): only when the
    /// origin did not forbid serving it stale (§4.2.4).
    public static func mayServeOnError(_ stored: Stored) -> Bool {
        !forbidsStale(stored.headers)
    }

    // MARK: - Updating and invalidating (§3.2, §4.4)

    /// Fields a 304 does not replace: they describe the body, which a 304 does not carry.
    private static let bodyFields = [
        "content-length", "content-encoding", "transfer-encoding", "content-range", "set-cookie",
    ]
    private static let bodySketches = bodyFields.map(sketch)

    /// The stored headers updated by a 304's headers (§3.2, §4.3.4): every field the 304 sends
    /// replaces the stored one, except those that describe the body; `Set-Cookie` never stored.
    public static func merge(stored: Headers, notModified: Headers) -> Headers {
        merged(stored: stored, notModified: notModified) ?? stored
    }

    /// `merge`, or nil when it gives `stored` back as it is (`repeats`).
    static func merged(stored: Headers, notModified: Headers) -> Headers? {
        if repeats(stored: stored, notModified: notModified) { return nil }
        // Names compared in any ASCII case, with no lower-cased copies and no sets; each name's
        // sketch (`sketch`) first, so most pairs are told apart by one integer comparison.
        var fresh: [(name: String, value: String)] = []
        var sketches: [Int] = []
        fresh.reserveCapacity(notModified.fields.count)
        sketches.reserveCapacity(notModified.fields.count)
        for field in notModified.fields {
            let sketch = sketch(field.name)
            let describesBody = bodySketches.indices.contains { index in
                bodySketches[index] == sketch && Headers.sameName(bodyFields[index], field.name)
            }
            guard !describesBody else { continue }
            fresh.append(field)
            sketches.append(sketch)
        }
        var merged: [(name: String, value: String)] = []
        merged.reserveCapacity(stored.fields.count + fresh.count)
        for field in stored.fields {
            let sketch = sketch(field.name)
            let replaced = sketches.indices.contains { index in
                sketches[index] == sketch && Headers.sameName(fresh[index].name, field.name)
            }
            if !replaced { merged.append(field) }
        }
        merged += fresh
        return Headers(fields: merged)
    }

    /// Whether `merge` gives `stored` back as it is.
    ///
    /// So it does when the 304's fields are the last of the stored ones, name for name and value
    /// for value, none describes the body, and no stored field before them has one of their
    /// names: most 304s after the first (the validators and the rate-limit fields repeated),
    /// told without building the merge.
    static func repeats(stored: Headers, notModified: Headers) -> Bool {
        // Read in place: a 304 after the first is checked here every time (no copies of the
        // fields, each a retain and release of its name and value; no array of sketches).
        stored.fields.withUnsafeBufferPointer { kept in
            notModified.fields.withUnsafeBufferPointer { fresh in
                let start = kept.count - fresh.count
                guard !fresh.isEmpty, start >= 0, let keptBase = kept.baseAddress, let freshBase = fresh.baseAddress
                else {
                    return false
                }
                // Byte for byte (String's == takes canonically equivalent text as equal): the
                // merge would keep the 304's bytes.
                for index in 0..<fresh.count where !sameField(keptBase + start + index, freshBase + index) {
                    return false
                }
                // None describes the body, and no stored field before them has one of their
                // names: names of other lengths differ, so most pairs are told apart by a length.
                let (bodyFields, bodyLengths) = (bodyFields, bodyLengths)
                return withUnsafeTemporaryAllocation(of: Int.self, capacity: fresh.count) { lengths in
                    for index in 0..<fresh.count {
                        let name = fresh[index].name
                        let length = name.utf8.count
                        lengths[index] = length
                        for body in bodyFields.indices
                        where bodyLengths[body] == length && Headers.sameName(bodyFields[body], name) {
                            return false
                        }
                    }
                    for earlier in 0..<start {
                        let name = kept[earlier].name
                        let length = name.utf8.count
                        for index in 0..<fresh.count
                        where lengths[index] == length && Headers.sameName(fresh[index].name, name) {
                            return false
                        }
                    }
                    return true
                }
            }
        }
    }

    private typealias Field = (name: String, value: String)
    private static let bodyLengths = bodyFields.map(\.utf8.count)
    /// Where a field's value lies in it (after its name).
    private static let valueOffset = MemoryLayout<Field>.offset(of: \Field.value)

    /// Whether the fields at `a` and `b` are the same names and values, byte for byte.
    ///
    /// Read where they lie: a string's two words are its whole value (a small string's bytes, or
    /// its storage and length), so equal words are equal bytes, told without loading either
    /// string (no retain and release); other words go to `Headers.sameBytes`.
    private static func sameField(_ a: UnsafePointer<Field>, _ b: UnsafePointer<Field>) -> Bool {
        func sameWords(_ x: UnsafeRawPointer, _ y: UnsafeRawPointer) -> Bool {
            let (p, q) = (x.load(as: (UInt64, UInt64).self), y.load(as: (UInt64, UInt64).self))
            return p.0 == q.0 && p.1 == q.1
        }
        guard let valueOffset, MemoryLayout<String>.size == 16 else {
            return Headers.sameBytes(a.pointee.name, b.pointee.name)
                && Headers.sameBytes(a.pointee.value, b.pointee.value)
        }
        let (x, y) = (UnsafeRawPointer(a), UnsafeRawPointer(b))
        let sameNames = sameWords(x, y) || Headers.sameBytes(a.pointee.name, b.pointee.name)
        return sameNames
            && (sameWords(x + valueOffset, y + valueOffset) || Headers.sameBytes(a.pointee.value, b.pointee.value))
    }

    /// A field name's length and its first and last bytes with the case bit set: two names the
    /// same in any case have the same sketch (names with different sketches differ).
    static func sketch(_ name: String) -> Int {
        func sketch(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
            guard let first = bytes.first, let last = bytes.last else { return 0 }
            return bytes.count << 16 | Int(first | 0x20) << 8 | Int(last | 0x20)
        }
        // A native string's bytes in place (String.UTF8View.last walks back; withUTF8 needs a
        // mutable copy).
        if let sketched = name.utf8.withContiguousStorageIfAvailable(sketch) { return sketched }
        var name = name
        return name.withUTF8(sketch)
    }

    /// Whether `a` and `b` hold the same fields in the same order, with the same names and values.
    static func sameFields(_ a: Headers, _ b: Headers) -> Bool {
        a.fields.count == b.fields.count
            && zip(a.fields, b.fields).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }

    /// Whether a response to `method` invalidates stored responses (§4.4): an unsafe method
    /// answered with a non-error status (2xx or 3xx).
    public static func invalidates(method: String, status: Int) -> Bool {
        !["GET", "HEAD", "OPTIONS", "TRACE"].contains(method.uppercased()) && (200..<400).contains(status)
    }

    /// The URLs an unsafe method's answer invalidates (§4.4): the target, and its `Location`
    /// and `Content-Location` when they are of the same origin.
    public static func invalidatedURLs(target: String, responseHeaders: Headers) -> [String] {
        var urls = [target]
        guard let origin = Origin(url: target), let base = URL(string: target) else { return urls }
        for name in ["Location", "Content-Location"] {
            guard let value = responseHeaders[name],
                let resolved = URL(string: value, relativeTo: base)?.absoluteString,
                Origin(url: resolved) == origin, !urls.contains(resolved)
            else { continue }
            urls.append(resolved)
        }
        return urls
    }

    // MARK: - Vary (§4.1)

    /// The lower-cased header names a response varies on (`Vary`), sorted, without duplicates.
    public static func varyNames(_ headers: Headers) -> [String] {
        Array(
            Set(
                headers.values("Vary").flatMap { $0.split(separator: ",") }
                    .map { $0.trimmingWhitespace().lowercased() }.filter { !$0.isEmpty })
        ).sorted()
    }

    /// The text that identifies a variant: the request's values of the `names` a response
    /// varies on, normalised (field lines joined, spaces around commas removed); an absent
    /// field differs from an empty one.
    ///
    /// Hash it before storing: the values may be credentials.
    public static func variantText(_ names: [String], _ request: Headers) -> String {
        guard !names.isEmpty else { return "" }
        return names.map { name -> String in
            let values = request.values(name)
            guard !values.isEmpty else { return "\(name)\u{0}" }
            let joined = values.flatMap { $0.split(separator: ",") }.map { $0.trimmingWhitespace() }
            return "\(name): \(joined.joined(separator: ","))"
        }.joined(separator: "\n")
    }

    // MARK: - Parsing

    /// `Cache-Control` directives, lower-cased, with their values unquoted (no value → "");
    /// the first of a repeated directive wins (§4.2.1).
    public static func directives(_ headers: Headers) -> [String: String] {
        var result: [String: String] = [:]
        for field in headers.fields where Headers.sameName(field.name, "Cache-Control") {
            var value = field.value
            value.withUTF8 { bytes in
                var start = 0
                while start < bytes.count {
                    var end = start
                    while end < bytes.count && bytes[end] != UInt8(ascii: ",") { end += 1 }
                    add(UnsafeBufferPointer(rebasing: bytes[start..<end]), to: &result)
                    start = end + 1
                }
            }
        }
        return result
    }

    /// Adds one `name[=value]` member of `Cache-Control` (its bytes) to `result`, unless
    /// its name is empty or already there: the name lower-cased, the value without the
    /// blanks and double quotes around it.
    ///
    /// Bytes, not `Character`s: no grapheme breaking, no Foundation character sets, on
    /// every cache decision.
    private static func add(_ member: UnsafeBufferPointer<UInt8>, to result: inout [String: String]) {
        let equals = member.firstIndex(of: UInt8(ascii: "="))
        let name = trimmed(member, 0, equals ?? member.count, trimming: blanks)
        guard !name.isEmpty else { return }
        let key = String(decoding: name, as: UTF8.self).lowercased()
        guard result[key] == nil else { return }
        guard let equals else {
            result[key] = ""
            return
        }
        let value = trimmed(member, equals + 1, member.count, trimming: blanks)
        result[key] = String(decoding: trimmed(value, 0, value.count, trimming: quotes), as: UTF8.self)
    }

    private static let blanks: [UInt8] = [UInt8(ascii: " "), UInt8(ascii: "\t")]
    private static let quotes: [UInt8] = [UInt8(ascii: "\"")]

    /// `bytes[from..<to]` without the leading and trailing bytes found in `trimming`.
    private static func trimmed(_ bytes: UnsafeBufferPointer<UInt8>, _ from: Int, _ to: Int, trimming: [UInt8])
        -> UnsafeBufferPointer<UInt8>
    {
        var (from, to) = (from, to)
        while from < to && trimming.contains(bytes[from]) { from += 1 }
        while to > from && trimming.contains(bytes[to - 1]) { to -= 1 }
        return UnsafeBufferPointer(rebasing: bytes[from..<to])
    }

    /// `delta-seconds` (§1.2.2): digits only; too large a value is 2147483648.
    static func deltaSeconds(_ text: some StringProtocol) -> Double? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        guard text.utf8.count <= 10 else { return 2_147_483_648 }
        // At most ten digits: exact in an Int and in a Double (no strtod on a hit's path).
        let value = text.utf8.reduce(0) { $0 * 10 + Int($1 - 0x30) }
        return min(Double(value), 2_147_483_648)
    }
}
