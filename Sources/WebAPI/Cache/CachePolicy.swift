import Foundation

/// The HTTP cache's decisions (RFC 9111, as a private cache): what may be
/// stored, whether a stored response is fresh, which validators to send, and
/// how a 304 updates the stored headers. Pure: no I/O, the clock passed in.
public enum CachePolicy {
    /// What to do with a stored response for a new request.
    public enum Decision: Equatable, Sendable {
        /// Serve it without asking the server.
        case fresh
        /// Ask the server with these conditional headers; a 304 means "serve it".
        case revalidate([String: String])
        /// It has no validators: ask the server plainly (the copy remains for stale-if-error).
        case refetch
    }

    /// Statuses stored: those RFC 9110 calls heuristically cacheable that an API answers with a body.
    public static let storableStatuses: Set<Int> = [200, 203, 300, 301, 308, 410]

    /// Whether a response may be stored: a GET, a storable status, and neither
    /// side said `no-store`, nor `Vary: *`.
    public static func isStorable(method: String, requestHeaders: Headers, status: Int, responseHeaders: Headers) -> Bool {
        guard method == "GET", storableStatuses.contains(status) else { return false }
        if directives(requestHeaders)["no-store"] != nil || directives(responseHeaders)["no-store"] != nil { return false }
        return !varyNames(responseHeaders).contains("*")
    }

    /// Whether the request asks not to use the cache at all (`Cache-Control: no-store`).
    public static func bypasses(requestHeaders: Headers) -> Bool {
        directives(requestHeaders)["no-store"] != nil
    }

    /// Decides between serving a stored response and asking the server.
    /// - Parameters:
    ///   - storedAt: when the response was received (or last revalidated), seconds since 1970.
    ///   - now: the current time, seconds since 1970.
    public static func decide(requestHeaders: Headers, responseHeaders: Headers, storedAt: Double, now: Double) -> Decision {
        let request = directives(requestHeaders)
        let forbidsFresh = request["no-cache"] != nil || request["max-age"] == "0" || requestHeaders["Pragma"] == "no-cache"
        if !forbidsFresh, let lifetime = freshnessLifetime(responseHeaders),
            age(responseHeaders: responseHeaders, storedAt: storedAt, now: now) < lifetime
        {
            return .fresh
        }
        var conditions: [String: String] = [:]
        if let etag = responseHeaders["ETag"] { conditions["If-None-Match"] = etag }
        if let modified = responseHeaders["Last-Modified"] { conditions["If-Modified-Since"] = modified }
        return conditions.isEmpty ? .refetch : .revalidate(conditions)
    }

    /// How long a response stays fresh, in seconds: `max-age`, else `Expires`
    /// minus `Date`; nil (stale at once) without either or with `no-cache`.
    /// No heuristic freshness: API data changes, so an unlabelled answer is revalidated.
    public static func freshnessLifetime(_ headers: Headers) -> Double? {
        let response = directives(headers)
        if response["no-cache"] != nil { return nil }
        if let maxAge = response["max-age"].flatMap(Double.init) { return maxAge }
        guard let expires = headers["Expires"] else { return nil }
        guard let expiry = httpDate(expires) else { return 0 }  // an invalid Expires means "already expired"
        let date = headers["Date"].flatMap(httpDate) ?? expiry
        return max(0, expiry.timeIntervalSince(date))
    }

    /// The response's age now: the `Age` it arrived with plus the time since it was stored.
    public static func age(responseHeaders: Headers, storedAt: Double, now: Double) -> Double {
        let initial = responseHeaders["Age"].flatMap(Double.init) ?? 0
        return max(0, initial) + max(0, now - storedAt)
    }

    /// The stored headers updated by a 304's headers (RFC 9111 §3.2): every
    /// field the 304 sends replaces the stored one, except those that describe the body.
    public static func merge(stored: Headers, notModified: Headers) -> Headers {
        let bodyFields: Set<String> = ["content-length", "content-encoding", "transfer-encoding", "content-range"]
        let fresh = notModified.fields.filter { !bodyFields.contains($0.name.lowercased()) }
        let replaced = Set(fresh.map { $0.name.lowercased() })
        let kept = stored.fields.filter { !replaced.contains($0.name.lowercased()) }
        return Headers((kept + fresh).map { ($0.name, $0.value) })
    }

    /// The lower-cased header names a response varies on (`Vary`).
    public static func varyNames(_ headers: Headers) -> [String] {
        headers.values("Vary").flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty }.sorted()
    }

    /// `Cache-Control` directives, lower-cased, with their values unquoted (nil value → "").
    public static func directives(_ headers: Headers) -> [String: String] {
        var result: [String: String] = [:]
        for value in headers.values("Cache-Control") {
            for part in value.split(separator: ",") {
                let pair = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard let name = pair.first?.lowercased(), !name.isEmpty else { continue }
                result[name] = pair.count == 2 ? pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"")) : ""
            }
        }
        return result
    }

    /// Parses an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`).
    public static func httpDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: text)
    }
}
