/// `GET /cross-host/items`: page 1 (2 items) links its next page to the *other* listener, so a
/// client following it changes host and must drop its credentials; page 2 has 1 item and no next.
struct CrossHostRoutes: RouteHandler {
    func respond(to request: RouteRequest) -> Response? {
        guard request.match("GET", "/cross-host/items") != nil else { return nil }
        let item = { (id: Int) in JSON.object([("id", .int(id)), ("name", .string("item-\(id)"))]) }
        if (request.queryInt("page") ?? 1) >= 2 {
            return .json(.array([item(3)]))
        }
        var response = Response.json(.array([item(1), item(2)]))
        response.setHeader("Link", "<\(request.endpoints.otherHostURL)/cross-host/items?page=2>; rel=\"next\"")
        return response
    }
}
