/// Helper routes that are not any API: statuses, text, bytes, broken JSON, big and slow answers,
/// redirects.
struct CommonRoutes: RouteHandler {
    static let maximumBytes = 64 * 1024 * 1024

    func respond(to request: RouteRequest) -> Response? {
        if let code = request.match("*", "/status/{code}")?["code"] {
            return status(code)
        }
        if request.match("GET", "/text") != nil {
            return .text("héllo wörld\n")
        }
        if let count = request.match("GET", "/bytes/{n}")?["n"] {
            return bytes(count)
        }
        if request.match("GET", "/not-json") != nil {
            return .text(#"{"login": "x","#, contentType: Response.jsonContentType)
        }
        if request.match("GET", "/big.json") != nil {
            return BigJSON.response(megabytes: request.query["mb"])
        }
        if request.match("GET", "/slow") != nil {
            let milliseconds = max(0, min(request.queryInt("ms") ?? 1000, 600_000))
            var response = Response.json(.object([("slept_ms", .int(milliseconds))]))
            response.delayMilliseconds = milliseconds
            return response
        }
        if request.match("*", "/redirect") != nil {
            return redirect(request)
        }
        return nil
    }

    private func status(_ text: String) -> Response {
        guard let code = Int(text), (200...599).contains(code) else {
            return .badRequest("status must be a number from 200 to 599")
        }
        if code == 204 || code == 304 { return Response(status: code) }
        return .message("status \(code)", status: code)
    }

    /// `n` deterministic bytes (the same prefix for every `n`).
    private func bytes(_ text: String) -> Response {
        guard let count = Int(text), (0...CommonRoutes.maximumBytes).contains(count) else {
            return .badRequest("n must be a number from 0 to \(CommonRoutes.maximumBytes)")
        }
        var generator = SplitMix64(seed: 0x0B17_E5)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count + 8)
        while bytes.count < count {
            withUnsafeBytes(of: generator.next().littleEndian) { bytes.append(contentsOf: $0) }
        }
        bytes.removeLast(bytes.count - count)
        return Response(status: 200, headers: [("Content-Type", "application/octet-stream")], body: bytes)
    }

    private func redirect(_ request: RouteRequest) -> Response {
        guard let target = request.query["to"], !target.isEmpty else {
            return .badRequest("the to parameter is required")
        }
        let code = request.queryInt("status") ?? 302
        guard [301, 302, 303, 307, 308].contains(code) else {
            return .badRequest("status must be 301, 302, 303, 307 or 308")
        }
        return .json(
            .object([("message", .string(Response.reasonPhrase(code))), ("location", .string(target))]),
            status: code, headers: [("Location", target)])
    }
}
