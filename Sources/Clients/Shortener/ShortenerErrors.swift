import Foundation
import WebAPI

/// How each backend's error bodies read: the message a macro sees (naming the field at fault)
/// and the exception class when the status alone does not decide it.
enum ShortenerErrors {
    /// The message of an error body from `backend`.
    static func message(_ backend: ShortenerBackend, _ response: Response) -> String? {
        switch backend {
        case .bitly: bitlyMessage(response.body)
        case .shlink: shlinkMessage(response.body)
        case .google: googleMessage(response.body)
        }
    }

    /// The error kind an error body from `backend` names; nil to go by the status.
    static func kind(_ backend: ShortenerBackend, _ response: Response) -> APIError.Kind? {
        switch backend {
        case .bitly:
            // Bitly's `message` is a code: FORBIDDEN (a bad token, a resource the token may not
            // touch), NOT_FOUND, RATE_LIMIT_EXCEEDED.
            switch JSONPath.string(in: response.body, path: ["message"]) {
            case "FORBIDDEN": return .forbidden
            case "NOT_FOUND": return .notFound
            default: return nil
            }
        case .shlink:
            // problem+json's `type` is a URI ending in the error's name.
            guard let type = JSONPath.string(in: response.body, path: ["type"]) else { return nil }
            let name = type.split(separator: "/").last.map(String.init) ?? type
            switch name {
            case "short-url-not-found", "not-found", "domain-not-found", "tag-not-found": return .notFound
            case "invalid-api-key", "missing-authentication": return .unauthorized
            case _ where name.hasPrefix("forbidden"): return .forbidden
            default: return nil
            }
        case .google:
            let reason = JSONPath.string(in: response.body, path: ["error", "errors", "0", "reason"])
            return ["keyInvalid", "keyExpired"].contains(reason ?? "") ? .unauthorized : nil
        }
    }

    /// Bitly: `{"message": CODE, "description": …, "errors": [{"field", "error_code"}]}` reads
    /// `CODE: description (field long_url: invalid)`.
    static func bitlyMessage(_ body: [UInt8]) -> String? {
        guard let object = JSONPath.value(in: body, path: []) as? [String: Any] else { return nil }
        let code = object["message"] as? String
        let description = object["description"] as? String
        var text = [code, description].compactMap { $0 }.joined(separator: ": ")
        let fields = (object["errors"] as? [Any] ?? []).compactMap { item -> String? in
            guard let entry = item as? [String: Any], let field = entry["field"] as? String else { return nil }
            return "field \(field)" + ((entry["error_code"] as? String).map { ": \($0)" } ?? "")
        }
        if !fields.isEmpty { text += (text.isEmpty ? "" : " ") + "(\(fields.joined(separator: "; ")))" }
        return text.isEmpty ? nil : text
    }

    /// Shlink's problem+json: `title: detail`, then the extras that name what was wrong
    /// (`invalidElements`, `customSlug`, `shortCode`, `domain`).
    static func shlinkMessage(_ body: [UInt8]) -> String? {
        guard let object = JSONPath.value(in: body, path: []) as? [String: Any] else { return nil }
        var text = [object["title"] as? String, object["detail"] as? String].compactMap { $0 }.joined(separator: ": ")
        var extras: [String] = []
        if let invalid = object["invalidElements"] as? [Any] {
            let names = invalid.compactMap { $0 as? String }
            if !names.isEmpty { extras.append("invalid fields: \(names.joined(separator: ", "))") }
        }
        for key in ["customSlug", "shortCode", "domain"] {
            if let value = object[key] as? String { extras.append("\(key) \(value.debugDescription)") }
        }
        if !extras.isEmpty { text += (text.isEmpty ? "" : " ") + "(\(extras.joined(separator: "; ")))" }
        return text.isEmpty ? nil : text
    }

    /// Google's `{"error": {"code", "message", "errors": [{"reason"}]}}` reads `message (reason)`.
    static func googleMessage(_ body: [UInt8]) -> String? {
        let message = JSONPath.string(in: body, path: ["error", "message"])
        let reason = JSONPath.string(in: body, path: ["error", "errors", "0", "reason"])
        switch (message, reason) {
        case (let message?, let reason?): return "\(message) (\(reason))"
        default: return message ?? reason
        }
    }
}
