/// Answers whose text would drive a terminal if printed as it is (`/hostile/escapes`): a
/// window title (`ESC ] 0 ; … BEL`), a screen clear (`ESC [ 2 J`), an 8-bit CSI (U+009B, a C1
/// control some terminals obey) and a DEL.
///
/// - `GET /hostile/escapes`: JSON, `{"title": …, "clear": …, "csi": …, "del": …}` (JSON escapes the
///   C0 controls as `\u001b`; U+009B and DEL are sent as they are, which JSON allows).
/// - `GET /hostile/escapes?type=MEDIA`: the same four texts raw, one per line, as MEDIA
///   (`text/plain`).
///
/// - `GET /hostile/identity/user`: GitHub's "who am I" as a hostile server answers it, for
///   `auth status --check`: a login holding a window-title escape, a screen clear and the
///   request's own Authorization value, and that value in `X-OAuth-Scopes` too.
struct TerminalEscapeRoutes: RouteHandler {
    func respond(to request: RouteRequest) -> Response? {
        if request.match("GET", "/hostile/identity/user") != nil {
            let authorization = request.recorded.header("Authorization") ?? ""
            return .json(
                .object([("login", .string("\u{1B}]0;pwned\u{07}octo\u{1B}[2Jcat " + authorization))]),
                headers: [("X-OAuth-Scopes", "repo, " + authorization)])
        }
        guard request.match("GET", "/hostile/escapes") != nil else { return nil }
        if let type = request.query["type"] {
            let body = TerminalEscapes.texts.map { $0.1 + "\n" }.joined()
            return Response(status: 200, headers: [("Content-Type", type)], body: Array(body.utf8))
        }
        return .json(.object(TerminalEscapes.texts.map { ($0.0, JSON.string($0.1)) }))
    }
}

/// The texts `/hostile/escapes` sends, as a terminal would receive them.
public enum TerminalEscapes {
    public static let texts: [(String, String)] = [
        ("title", "\u{1B}]0;pwned\u{07}"), ("clear", "\u{1B}[2J"), ("csi", "\u{9B}31mred"), ("del", "a\u{7F}b"),
    ]
}
