/// JSON bodies that are small as bytes and huge as objects (`/hostile/json/…`), for the bound
/// on what one decode may build.
///
/// - `GET /hostile/json/empty-objects?mib=N[&form=F][&status=S]`: `[{},{},…]`, about N MiB (at
///   most 64), each `{}` 72 bytes as Python objects. `F` is how it is written: `plain` (the
///   default); `bom` (a UTF-8 BOM first); `utf16` (UTF-16LE with its BOM, twice the bytes);
///   `deep` (the array's first element nested 600 arrays deep, past the native parser's 512
///   levels). `S` is the status (default 200; an error status puts the body where a client
///   looks for an error message).
///
/// Made afresh for each request (not kept: the test process would hold them all).
struct HostileJSONRoutes: RouteHandler {
    static let maximumMebibytes = 64

    func respond(to request: RouteRequest) -> Response? {
        guard request.match("GET", "/hostile/json/empty-objects") != nil else { return nil }
        let mebibytes = request.queryInt("mib") ?? 1
        let form = request.query["form"] ?? "plain"
        guard (1...Self.maximumMebibytes).contains(mebibytes), ["plain", "bom", "utf16", "deep"].contains(form) else {
            return .badRequest("mib is 1 to \(Self.maximumMebibytes); form is plain, bom, utf16 or deep")
        }
        return Response(
            status: request.queryInt("status") ?? 200, headers: [("Content-Type", Response.jsonContentType)],
            body: Self.emptyObjects(size: mebibytes << 20, form: form))
    }

    static func emptyObjects(size: Int, form: String) -> [UInt8] {
        var text = Array(((form == "bom" ? "\u{FEFF}" : "") + "[").utf8)
        if form == "deep" {
            text += Array((String(repeating: "[", count: 600) + String(repeating: "]", count: 600) + ",").utf8)
        }
        text += Array("{}".utf8)
        // As many more `,{}` as keep the whole (with its `]`) just under `size`.
        text += Array(String(repeating: ",{}", count: max(0, (size - 4 - text.count + 2) / 3)).utf8)
        text.append(UInt8(ascii: "]"))
        guard form == "utf16" else { return text }
        var wide = [UInt8](repeating: 0, count: text.count * 2 + 2)
        wide[0] = 0xFF
        wide[1] = 0xFE
        for (index, byte) in text.enumerated() { wide[2 + 2 * index] = byte }
        return wide
    }
}
