import Platform

/// Follows redirects itself (the transport never does), so that each hop goes
/// back through the credential stage: a redirect to another origin arrives
/// there without the client's credential, and without any header the request
/// carried that the credential rule names (`CredentialNames.isCredentialHeader`:
/// `Authorization`, `Proxy-Authorization`, `Cookie`, `X-Api-Key`, `Private-Token`, …)
/// or whose value holds a secret the client knows.
///
/// A request body is never sent on to another origin: a 307 or 308 (or a 301/302 of a
/// method other than POST) that would carry one there is refused with an `HTTPError`
/// naming the target's origin, and nothing is sent there.
///
/// A redirect off http(s), or from https to plain http on another host than
/// loopback, is a `NetworkError` (`SchemeRule`) and is never sent.
public struct RedirectStage: Stage {
    /// At most this many hops.
    ///
    /// Default 10.
    public let maxRedirects: Int
    /// The client's credential and redactor: the secrets a header may hold, and what messages redact.
    let slot: CredentialSlot?

    /// - Parameters:
    ///   - maxRedirects: at most this many hops.
    ///   - slot: the client's credential slot, whose redactor knows its secrets (nil: none known).
    public init(maxRedirects: Int = 10, slot: CredentialSlot? = nil) {
        self.maxRedirects = maxRedirects
        self.slot = slot
    }

    public nonisolated(nonsending) func handle(_ exchange: Exchange, next: Next) async throws -> Response {
        var current = exchange
        for _ in 0...maxRedirects {
            let response = try await next(current)
            // A rate limit's wait came before the first hop only.
            current.heldAbove = 0
            guard try follow(response, from: &current) else { return response }
        }
        throw tooManyRedirects(exchange)
    }

    /// Whether `response` is a redirect to follow; then `current` is made the next hop's exchange.
    ///
    /// A function of its own, not inlined: what it holds lives on the thread's stack, not in
    /// `handle`'s async frame.
    @inline(never)
    private func follow(_ response: Response, from current: inout Exchange) throws -> Bool {
        guard [301, 302, 303, 307, 308].contains(response.status), let location = response.headers["location"],
            let target = URL(string: location, relativeTo: URL(string: current.url))?.absoluteString
        else { return false }
        // Only http(s), and from https down to http only towards loopback: `http+unix://…`
        // would reach a local socket (the POST body included), `file://` a file.
        try SchemeRule.check(target, from: current.url, what: "redirect", method: current.method, redactor: redactor)
        if response.status == 303 || ([301, 302].contains(response.status) && current.method == "POST") {
            current.method = "GET"
            current.body = []
            current.headers.remove("Content-Type")
        }
        if let origin = Origin(url: target), origin != current.origin {
            guard current.body.isEmpty else { throw bodyRefused(current, response.status, to: origin) }
            current.headers = withoutCredentials(current.headers)
        }
        current.url = target
        return true
    }

    @inline(never)
    private func tooManyRedirects(_ exchange: Exchange) -> APIError {
        APIError(.http, "\(exchange.method) \(exchange.url): more than \(maxRedirects) redirects")
    }

    /// An answer at once that is not a redirect (`handle` returns it as it is); a redirect
    /// answered at once goes the asynchronous way (`AtOnce.Unfinished`: no stage below answers
    /// one at once today).
    public var atOnce: AtOnce.Role { .passes }

    public func answerAtOnce(_ exchange: Exchange, next: AtOnce) throws -> Response? {
        guard let response = try next(exchange) else { return nil }
        guard ![301, 302, 303, 307, 308].contains(response.status) || response.headers["location"] == nil else {
            throw AtOnce.Unfinished()
        }
        return response
    }

    private var redactor: Redactor { slot?.redactor ?? Redactor(secrets: []) }

    /// `headers` without those that carry a credential: named so by the credential rule, or
    /// holding a secret the client knows whatever their name.
    func withoutCredentials(_ headers: Headers) -> Headers {
        let redactor = redactor
        return Headers(
            headers.fields.filter { field in
                !CredentialNames.isCredentialHeader(field.name) && redactor.redact(field.value) == field.value
            }.map { ($0.name, $0.value) })
    }

    /// The error for a redirect that would carry the request's body to `origin`.
    private func bodyRefused(_ exchange: Exchange, _ status: Int, to origin: Origin) -> APIError {
        let redactor = redactor
        let url = redactor.redactURL(exchange.url)
        let target = redactor.redact("\(origin.scheme)://\(origin.host):\(origin.port)")
        return APIError(
            .http,
            "\(exchange.method) \(url) → \(status) \(HTTPStatus.reason(status)): refused to send the request body "
                + "on to another origin, \(target); nothing was sent there (send the request to that origin "
                + "yourself if it should have the body)",
            status: status, url: url)
    }
}
