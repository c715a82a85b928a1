import Platform
import Synchronization

/// The warning a `Deprecation` (RFC 9745) or `Sunset` (RFC 8594) header earns: one per run and
/// API, naming the date and the page the server links (`Link: <…>; rel="deprecation"` or
/// `rel="sunset"`), such as GitHub sends for an API version or endpoint it will remove.
///
/// Shared by every client of the process (`ExchangeStore.deprecations`). The server's text is
/// never printed as it came: dates are read and written again, a link is shown only when it is
/// an http(s) URL without controls, at most 300 characters.
public final class DeprecationNotices: Sendable {
    private let warned = Mutex<Set<String>>([])
    private let warn: @Sendable (String) -> Void

    /// Notices printed with `warn`.
    public init(warn: @escaping @Sendable (String) -> Void) { self.warn = warn }

    /// Warns about `response` to `method` `url` of `api`, when it carries either header and no
    /// warning for `api` was printed yet.
    public func check(_ response: Response, method: String, url: String, api: String, redactor: Redactor) {
        // Both fields in one pass over the answer's headers (every answer passes here), the
        // first of each as a lookup gives it; a name's length tells which it may be.
        var deprecation: String?
        var sunset: String?
        for field in response.headers.fields {
            switch field.name.utf8.count {
            case 11 where deprecation == nil && Headers.sameName(field.name, "Deprecation"): deprecation = field.value
            case 6 where sunset == nil && Headers.sameName(field.name, "Sunset"): sunset = field.value
            default: continue
            }
        }
        guard deprecation != nil || sunset != nil else { return }
        guard warned.withLock({ $0.insert(api).inserted }) else { return }
        var facts: [String] = []
        if let deprecation {
            facts.append("deprecated" + (Self.date(deprecation).map { " since \($0)" } ?? ""))
        }
        if let sunset {
            facts.append("to be removed" + (Self.date(sunset).map { " on \($0)" } ?? ""))
        }
        let links = Self.links(response.headers.values("Link"), relations: ["deprecation", "sunset"])
        let path = redactor.redactURL(url).split(separator: "?", maxSplits: 1).first.map(String.init) ?? ""
        warn(
            "apimacro: warning: \(api): the server says \(method) \(Self.clean(path)) is "
                + facts.joined(separator: " and ")
                + (links.isEmpty ? "" : "; see \(links.joined(separator: " and "))")
                + " (said once per run)")
    }

    /// `@EPOCH` (RFC 9745), or an HTTP date (RFC 8594, and the drafts before 9745), as
    /// YYYY-MM-DD; nil for anything else (`true`, an older draft's).
    static func date(_ text: String) -> String? {
        let value = text.trimmingWhitespace()
        var epoch: Double?
        if value.hasPrefix("@"), let seconds = Double(value.dropFirst()), seconds.isFinite, abs(seconds) < 3e11 {
            epoch = seconds
        } else {
            epoch = HTTPDate.parse(value)
        }
        guard let epoch else { return nil }
        return UTCDateText.day(Date(timeIntervalSince1970: epoch))
    }

    /// The http(s) targets of the `Link` fields whose `rel` is one of `relations`, each once.
    static func links(_ fields: [String], relations: Set<String>) -> [String] {
        var found: [String] = []
        for field in fields {
            for part in field.split(separator: ",") {
                let pieces = part.split(separator: ";").map { $0.trimmingWhitespace() }
                guard let target = pieces.first, target.hasPrefix("<"), target.hasSuffix(">") else { continue }
                let rels = pieces.dropFirst().compactMap { piece -> [String]? in
                    let pair = piece.split(separator: "=", maxSplits: 1).map(String.init)
                    guard pair.count == 2, pair[0].lowercased() == "rel" else { return nil }
                    return pair[1].trimmingScalars { $0 == "\"" }.lowercased()
                        .split(separator: " ").map(String.init)
                }.flatMap { $0 }
                let url = String(target.dropFirst().dropLast())
                guard rels.contains(where: relations.contains), url.count <= 300,
                    url.hasPrefix("https://") || url.hasPrefix("http://"),
                    url.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }), !found.contains(url)
                else { continue }
                found.append(url)
            }
        }
        return found
    }

    /// `text` without controls, at most 200 characters.
    static func clean(_ text: String) -> String {
        let shown = String(decoding: TerminalText.escapingControls(Array(text.utf8)), as: UTF8.self)
        return shown.count > 200 ? String(shown.prefix(199)) + "…" : shown
    }
}

/// Tells `DeprecationNotices` of each answer (sits where every answer, cached ones too, passes).
public struct DeprecationStage: Stage {
    let notices: DeprecationNotices
    let api: String
    let slot: CredentialSlot

    public nonisolated(nonsending) func handle(_ exchange: Exchange, next: Next) async throws -> Response {
        let response = try await next(exchange)
        notices.check(response, method: exchange.method, url: exchange.url, api: api, redactor: slot.redactor)
        return response
    }

    public var atOnce: AtOnce.Role { .passes }

    public func answerAtOnce(_ exchange: Exchange, next: AtOnce) throws -> Response? {
        guard let response = try next(exchange) else { return nil }
        notices.check(response, method: exchange.method, url: exchange.url, api: api, redactor: slot.redactor)
        return response
    }
}
