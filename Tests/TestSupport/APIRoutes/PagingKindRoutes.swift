import Foundation

/// Lists paged the ways real APIs page them beyond `Link` and page numbers, for plugins'
/// `pagination` kinds (issue 39). No recording exists for these; each answer follows the
/// shape its provider documents, and says so:
///
/// - `GET /paging/offset?offset=O&limit=L` (L default 10): `{"items": [...], "meta": {"total": 45}}`,
///   items `O..<O+L` of 45: the offset/limit shape dlt's `OffsetPaginator` documents (a total in
///   the body, a short or empty page past the end).
/// - `GET /paging/cursor?cursor=C&limit=L`: Slack's cursor pagination as its Web API documents it
///   (docs.slack.dev, "Pagination"): `{"ok": true, "members": [...], "response_metadata":
///   {"next_cursor": "dXNlcjoxMA=="}}`, the next cursor an opaque base64 text (`user:N`), empty on
///   the last page. An unknown cursor answers 200 with `{"ok": false, "error": "invalid_cursor"}`,
///   as Slack does.
/// - `GET /paging/header-cursor?cursor=C&limit=L`: a JSON array of items, the next cursor in the
///   `X-Next-Cursor` header (absent on the last page): the header-cursor shape of dlt's
///   `HeaderCursorPaginator`.
/// - `GET /paging/slack-error`: Slack's error inside a 200 (`{"ok": false, "error": "invalid_auth"}`).
///
/// Each item is `{"id": N, "name": "item N"}`, N from 1 to 45.
struct PagingKindRoutes: RouteHandler {
    static let total = 45

    static func items(_ range: Range<Int>) -> JSON {
        .array(range.map { .object([("id", .int($0 + 1)), ("name", .string("item \($0 + 1)"))]) })
    }

    static func cursor(at index: Int) -> String { Data("user:\(index)".utf8).base64EncodedString() }

    static func index(of cursor: String?) -> Int? {
        guard let cursor, !cursor.isEmpty else { return 0 }
        guard let data = Data(base64Encoded: cursor), let text = String(data: data, encoding: .utf8),
            text.hasPrefix("user:"), let index = Int(text.dropFirst(5)), (0...total).contains(index)
        else { return nil }
        return index
    }

    func respond(to request: RouteRequest) -> Response? {
        guard request.segments.first == "paging" else { return nil }
        let limit = max(1, min(request.queryInt("limit") ?? 10, 1000))
        if request.match("GET", "/paging/offset") != nil {
            let start = max(0, min(request.queryInt("offset") ?? 0, Self.total))
            return .json(
                .object([
                    ("items", Self.items(start..<min(Self.total, start + limit))),
                    ("meta", .object([("total", .int(Self.total))])),
                ]))
        }
        if request.match("GET", "/paging/cursor") != nil {
            guard let start = Self.index(of: request.query["cursor"]) else {
                return .json(.object([("ok", .bool(false)), ("error", .string("invalid_cursor"))]))
            }
            let end = min(Self.total, start + limit)
            return .json(
                .object([
                    ("ok", .bool(true)), ("members", Self.items(start..<end)),
                    (
                        "response_metadata",
                        .object([("next_cursor", .string(end < Self.total ? Self.cursor(at: end) : ""))])
                    ),
                ]))
        }
        if request.match("GET", "/paging/header-cursor") != nil {
            guard let start = Self.index(of: request.query["cursor"]) else {
                return .badRequest("unknown cursor")
            }
            let end = min(Self.total, start + limit)
            var response = Response.json(Self.items(start..<end))
            if end < Self.total { response.setHeader("X-Next-Cursor", Self.cursor(at: end)) }
            return response
        }
        if request.match("GET", "/paging/slack-error") != nil {
            return .json(.object([("ok", .bool(false)), ("error", .string("invalid_auth"))]))
        }
        return nil
    }
}
