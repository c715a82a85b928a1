import Foundation

/// `ANY /echo` and `ANY /echo/…`: describes the request it received, as JSON.
///
/// Keys: method, path, query, headers (lower-cased names; repeats joined with ", "), body_text
/// (null when the body is not UTF-8), body_base64, form (urlencoded or multipart fields, else
/// null), files (multipart file parts, else null), json (the parsed body when the content type is
/// JSON, else null).
struct EchoRoutes: RouteHandler {
    func respond(to request: RouteRequest) -> Response? {
        guard request.match("*", "/echo/**") != nil else { return nil }
        let recorded = request.recorded
        let contentType = recorded.header("content-type") ?? ""
        let mediaType = contentType.split(separator: ";").first.map { $0.trimmed(of: " \t").lowercased() } ?? ""
        var form: JSON = .null
        var files: JSON = .null
        if mediaType == "application/x-www-form-urlencoded" {
            form = .object(URLCoding.formPairs(recorded.bodyText).map { ($0.0, JSON.string($0.1)) })
        } else if let boundary = Multipart.boundary(contentType: contentType),
            let parts = Multipart.parse(recorded.body, boundary: boundary)
        {
            form = .object(
                parts.filter { $0.filename == nil }.map { ($0.name ?? "", JSON.string(utf8($0.body) ?? "")) })
            files = .array(parts.filter { $0.filename != nil }.map(fileDescription))
        }
        var json: JSON = .null
        if mediaType == "application/json" || mediaType.hasSuffix("+json") {
            json = (try? JSON(parsing: recorded.body)) ?? .null
        }
        let echo = JSON.object([
            ("method", .string(recorded.method)),
            ("path", .string(recorded.path)),
            ("query", .object(recorded.query.sorted { $0.key < $1.key }.map { ($0.key, JSON.string($0.value)) })),
            ("headers", headers(recorded)),
            ("body_text", .nullable(utf8(recorded.body))),
            ("body_base64", .string(Data(recorded.body).base64EncodedString())),
            ("form", form),
            ("files", files),
            ("json", json),
        ])
        return .json(echo)
    }

    private func headers(_ recorded: RecordedRequest) -> JSON {
        var names: [String] = []
        var values: [String: [String]] = [:]
        for (name, value) in recorded.headers {
            let key = name.lowercased()
            if values[key] == nil { names.append(key) }
            values[key, default: []].append(value)
        }
        return .object(names.map { ($0, JSON.string(values[$0, default: []].joined(separator: ", "))) })
    }

    private func fileDescription(_ part: MultipartPart) -> JSON {
        .object([
            ("name", .nullable(part.name)),
            ("filename", .nullable(part.filename)),
            ("content_type", .nullable(part.contentType)),
            ("size", .int(part.body.count)),
            ("text", .nullable(utf8(part.body))),
        ])
    }

    /// The bytes as text when they are valid UTF-8.
    private func utf8(_ bytes: [UInt8]) -> String? {
        let text = String(decoding: bytes, as: UTF8.self)
        return text.utf8.elementsEqual(bytes) ? text : nil
    }
}
