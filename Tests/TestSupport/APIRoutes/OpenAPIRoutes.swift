import Foundation

/// The APIs of the OpenAPI documents kept as fixtures in `Tests/EndToEndTests/OpenAPI`.
///
/// Issue 39, "A plugin from an OpenAPI document": each under its own prefix, answering with the
/// values the document itself gives as `example`s (where it gives none, values of the documented
/// shape):
///
/// - `/petstore/v3` (swagger-petstore's `openapi.yaml`, OAuth2 implicit: `Authorization: Bearer
///   pet-token`, else 401): `GET pet/findByStatus?status=` → an array of the `Pet` example
///   (`id` 10, `doggie`, category `Dogs`), `GET pet/{petId}`, `GET store/order/{orderId}` → the
///   `Order` example.
/// - `/uber/v1` (the OpenAPI Initiative's `uber.json`, `server_token=uber-key` in the query, else
///   401): `GET history?offset=&limit=` → `Activities` (`offset`, `limit`, `count` 7, `history`:
///   activities `uuid` `a1`…`a7`, 5 a page unless `limit` says otherwise), `GET me` → a `Profile`,
///   `GET products?latitude=&longitude=` → a `ProductList`.
/// - `/bsky/xrpc` (AT Protocol's XRPC as bsky-docs' `api.json` describes it, `Authorization: Bearer
///   bsky-token`, else 401 `AuthMissing`): `GET app.bsky.actor.getSuggestions?cursor=` → `{"actors":
///   [profileView], "cursor": …}`, 7 actors 3 a page, the cursor (`page2`, `page3`) absent on the
///   last page (an unknown cursor: 400 `InvalidRequest`); `GET app.bsky.actor.getProfile?actor=`
///   → a `profileViewDetailed`; `GET app.bsky.actor.getPreferences` → `{"preferences": [...]}`.
/// - `/openapi-docs/{file}`: the fixture documents themselves (`uber.json`, `petstore.yaml`, …), for a
///   plugin made from a URL.
struct OpenAPIRoutes: RouteHandler {
    static let petstoreToken = "pet-token"
    static let uberKey = "uber-key"
    static let uberHistory = 7
    static let bskyToken = "bsky-token"
    static let bskyActors = 7

    static let pet: JSON = .object([
        ("id", .int(10)), ("name", .string("doggie")),
        ("category", .object([("id", .int(1)), ("name", .string("Dogs"))])),
        ("photoUrls", .array([])), ("tags", .array([])), ("status", .string("available")),
    ])

    static let order: JSON = .object([
        ("id", .int(10)), ("petId", .int(198_772)), ("quantity", .int(7)), ("status", .string("approved")),
        ("complete", .bool(true)),
    ])

    func respond(to request: RouteRequest) -> Response? {
        switch request.segments.first {
        case "petstore": return petstore(request)
        case "uber": return uber(request)
        case "bsky": return bsky(request)
        case "openapi-docs": return document(request)
        default: return nil
        }
    }

    /// `Tests/EndToEndTests/OpenAPI`, beside this target's folder.
    static var documents: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("EndToEndTests/OpenAPI")
    }

    func document(_ request: RouteRequest) -> Response? {
        guard let name = request.match("GET", "/openapi-docs/{file}")?["file"], !name.contains("/"),
            let data = FileManager.default.contents(atPath: Self.documents.appendingPathComponent(name).path)
        else { return .message("no such document", status: 404) }
        let type = name.hasSuffix(".json") ? "application/json" : "application/yaml"
        return Response(status: 200, headers: [("Content-Type", type)], body: [UInt8](data))
    }

    func petstore(_ request: RouteRequest) -> Response? {
        guard request.recorded.header("Authorization") == "Bearer \(Self.petstoreToken)" else {
            return .json(.object([("code", .int(401)), ("message", .string("not authorized"))]), status: 401)
        }
        if request.match("GET", "/petstore/v3/pet/findByStatus") != nil {
            let status = request.query["status"] ?? "available"
            return .json(.array(status == "available" ? [Self.pet] : []))
        }
        if let id = request.match("GET", "/petstore/v3/pet/{petId}")?["petId"] {
            return id == "10"
                ? .json(Self.pet)
                : .json(.object([("code", .int(404)), ("message", .string("Pet not found"))]), status: 404)
        }
        if request.match("GET", "/petstore/v3/store/order/{orderId}") != nil { return .json(Self.order) }
        return nil
    }

    func uber(_ request: RouteRequest) -> Response? {
        guard request.query["server_token"] == Self.uberKey else {
            return .json(
                .object([("code", .string("unauthorized")), ("message", .string("Invalid token"))]), status: 401)
        }
        if request.match("GET", "/uber/v1/history") != nil {
            let offset = max(0, min(request.queryInt("offset") ?? 0, Self.uberHistory))
            let limit = max(1, min(request.queryInt("limit") ?? 5, 100))
            let end = min(Self.uberHistory, offset + limit)
            return .json(
                .object([
                    ("offset", .int(offset)), ("limit", .int(limit)), ("count", .int(Self.uberHistory)),
                    ("history", .array((offset..<end).map { .object([("uuid", .string("a\($0 + 1)"))]) })),
                ]))
        }
        if request.match("GET", "/uber/v1/me") != nil {
            return .json(
                .object([
                    ("first_name", .string("Uber")), ("last_name", .string("Rider")),
                    ("email", .string("rider@example.com")), ("promo_code", .string("PROMO")),
                ]))
        }
        if request.match("GET", "/uber/v1/products") != nil {
            return .json(
                .object([
                    (
                        "products",
                        .array([
                            .object([
                                ("product_id", .string("uberX")), ("display_name", .string("uberX")),
                                ("capacity", .int(4)),
                            ])
                        ])
                    )
                ]))
        }
        return nil
    }

    func bsky(_ request: RouteRequest) -> Response? {
        guard request.recorded.header("Authorization") == "Bearer \(Self.bskyToken)" else {
            return .json(
                .object([("error", .string("AuthMissing")), ("message", .string("Authentication Required"))]),
                status: 401)
        }
        if request.match("GET", "/bsky/xrpc/app.bsky.actor.getSuggestions") != nil {
            let page: Int
            switch request.query["cursor"] {
            case nil, "": page = 0
            case "page2": page = 1
            case "page3": page = 2
            default:
                return .json(
                    .object([("error", .string("InvalidRequest")), ("message", .string("malformed cursor"))]),
                    status: 400)
            }
            let range = (page * 3)..<min(Self.bskyActors, page * 3 + 3)
            var body: [(String, JSON)] = [
                (
                    "actors",
                    .array(
                        range.map {
                            .object([
                                ("did", .string("did:plc:actor\($0 + 1)")),
                                ("handle", .string("actor\($0 + 1).bsky.social")),
                                ("displayName", .string("Actor \($0 + 1)")),
                            ])
                        })
                )
            ]
            if range.upperBound < Self.bskyActors { body.append(("cursor", .string("page\(page + 2)"))) }
            return .json(.object(body))
        }
        if request.match("GET", "/bsky/xrpc/app.bsky.actor.getProfile") != nil {
            let actor = request.query["actor"] ?? ""
            return .json(
                .object([
                    ("did", .string("did:plc:\(actor)")), ("handle", .string(actor)), ("followersCount", .int(42)),
                    ("followsCount", .int(7)), ("postsCount", .int(3)),
                ]))
        }
        if request.match("GET", "/bsky/xrpc/app.bsky.actor.getPreferences") != nil {
            return .json(
                .object([
                    (
                        "preferences",
                        .array([.object([("enabled", .bool(false))]), .object([("sort", .string("newest"))])])
                    )
                ]))
        }
        return nil
    }
}
