import Platform
public import WebAPI

/// The usage Meta reports in every Graph answer (its "Rate Limits" page): `X-App-Usage`
/// (`{"call_count", "total_time", "total_cputime"}`, percentages of the app's limits) and
/// `X-Business-Use-Case-Usage` (`{"<account id>": [{"type", "call_count", "total_cputime",
/// "total_time", "estimated_time_to_regain_access"}]}`, the last in minutes), each a JSON
/// document inside the header; pyfb-2019-headers.json in ../shared/fixtures/instagram-graph/ is
/// a recorded one.
///
/// The headers come from the server: a value that is too long, too nested, not JSON, or holds
/// numbers that are not finite is left out, and every figure is bounded, so no header can make
/// a wait that traps or stalls.
public enum InstagramGraphUsage {
    /// The names of the figures, as `instagram.rate_limit` shows them.
    public static let percentages = ["call_count", "total_time", "total_cputime"]
    /// The minutes until a throttled app or account may call again.
    public static let regain = "estimated_time_to_regain_access"

    /// The longest header value read: 8 KiB (a real one is under 200 bytes).
    static let maxHeaderBytes = 8192
    /// The most JSON values a header may hold to be read.
    static let maxValues = 512
    /// The highest percentage kept (a hostile `1e300` is this).
    static let maxPercent = 1_000_000.0

    /// The rule the pipeline reads Graph answers with (`UsageStage`).
    public static let rule = UsageRule(read: read, isThrottled: InstagramGraphEnvelope.isThrottled)

    /// The usage in `headers`: each figure's highest value over `X-App-Usage` and every entry of
    /// `X-Business-Use-Case-Usage`; nil when neither holds a readable figure.
    @Sendable public static func read(_ headers: Headers) -> Usage? {
        var figures: [String: Double] = [:]
        for value in headers.values("x-app-usage") {
            if let object = document(value) as? [String: Any] { merge(object, into: &figures) }
        }
        for value in headers.values("x-business-use-case-usage") {
            guard let object = document(value) as? [String: Any] else { continue }
            for entries in object.values {
                for entry in (entries as? [Any]) ?? [] {
                    if let entry = entry as? [String: Any] { merge(entry, into: &figures) }
                }
            }
        }
        guard !figures.isEmpty else { return nil }
        let percent = percentages.compactMap { figures[$0] }.max() ?? 0
        let regainAfter = figures[regain].map { $0 * 60 }
        return Usage(figures: figures, percent: percent, regainAfter: regainAfter)
    }

    /// The JSON inside a header value, or nil when it is too long, holds too many values, or is not JSON.
    static func document(_ value: String) -> Any? {
        let bytes = Array(value.utf8)
        guard bytes.count <= maxHeaderBytes, JSONPath.holds(atMost: maxValues, bytes) else { return nil }
        return JSONValue.parse(Data(bytes))?.native
    }

    /// Takes each known figure of `object` that is a finite number (or a numeric string), bounded,
    /// keeping the highest seen.
    static func merge(_ object: [String: Any], into figures: inout [String: Double]) {
        for name in percentages + [regain] {
            guard let number = number(object[name]) else { continue }
            let bounded =
                name == regain
                ? min(number, RateLimitPolicy.longestWait / 60) : min(number, maxPercent)
            figures[name] = max(figures[name] ?? 0, bounded)
        }
    }

    /// A finite, non-negative number from a JSON number or a numeric string; nil otherwise.
    static func number(_ value: Any?) -> Double? {
        var number = InstagramGraphEnvelope.number(value)
        if number == nil, let text = value as? String, text.utf8.count <= 32 { number = Double(text) }
        guard let number, number.isFinite else { return nil }
        return max(0, number)
    }
}
