import Foundation

/// Follows redirects itself (the transport never does), so that each hop goes
/// back through the credential stage: a redirect to another host arrives
/// there without the client's credential, and any `Authorization` or `Cookie`
/// header the request carried is dropped when the origin changes.
///
/// A redirect off http(s), or from https to plain http on another host than
/// loopback, is a `NetworkError` (`SchemeRule`) and is never sent.
public struct RedirectStage: Stage {
    /// At most this many hops.
    ///
    /// Default 10.
    public let maxRedirects: Int

    public init(maxRedirects: Int = 10) { self.maxRedirects = maxRedirects }

    public func handle(_ exchange: Exchange, next: Next) async throws -> Response {
        var current = exchange
        for _ in 0...maxRedirects {
            let response = try await next(current)
            guard [301, 302, 303, 307, 308].contains(response.status), let location = response.headers["location"],
                let target = URL(string: location, relativeTo: URL(string: current.url))?.absoluteString
            else { return response }
            // Only http(s), and from https down to http only towards loopback: `http+unix://…`
            // would reach a local socket (the POST body included), `file://` a file.
            try SchemeRule.check(
                target, from: current.url, what: "redirect", method: current.method, redactor: Redactor(secrets: []))
            if Origin(url: target) != current.origin {
                current.headers.remove("Authorization")
                current.headers.remove("Cookie")
            }
            if response.status == 303 || ([301, 302].contains(response.status) && current.method == "POST") {
                current.method = "GET"
                current.body = []
                current.headers.remove("Content-Type")
            }
            current.url = target
        }
        throw APIError(.http, "\(exchange.method) \(exchange.url): more than \(maxRedirects) redirects")
    }
}
