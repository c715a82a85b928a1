import Platform
public import WebAPI

/// The Graph API's error envelope, `{"error": {"message", "type", "code", "error_subcode",
/// "is_transient", "fbtrace_id"}}`, and which exception each error is (Meta's "Handle errors"
/// page of the Graph API documents the codes; pyfb-base-error_data.json and pyfb-error.json in
/// ../shared/fixtures/instagram-graph/ are recorded ones).
///
/// Instagram's token URL (`api.instagram.com/oauth/access_token`) answers errors in its older
/// shape, `{"error_type", "code", "error_message"}`; `message` reads both.
public enum InstagramGraphEnvelope {
    /// One error as the envelope describes it.
    public struct GraphError: Sendable, Equatable {
        /// `message`.
        public var message: String?
        /// `type` (`OAuthException`).
        public var type: String?
        /// `code`: what went wrong (190: the token; 4, 17, 32, 613, 80000-80099: throttling).
        public var code: Int?
        /// `error_subcode`: the detail of a code (463: the token expired).
        public var subcode: Int?
        /// `is_transient`: sending the same request later may work.
        public var isTransient: Bool
        /// `fbtrace_id`: what Meta's support asks for.
        public var traceID: String?
    }

    /// The error in `response`'s body, or nil when it holds no Graph envelope (or is too large
    /// to read: `JSONPath.maxValues`).
    public static func error(in response: Response) -> GraphError? {
        guard !response.isSuccess, let fields = JSONValue.native(in: response.body, path: ["error"]) as? [String: Any]
        else { return nil }
        return GraphError(
            message: fields["message"] as? String, type: fields["type"] as? String, code: integer(fields["code"]),
            subcode: integer(fields["error_subcode"]), isTransient: (fields["is_transient"] as? Bool) ?? false,
            traceID: fields["fbtrace_id"] as? String)
    }

    /// Throttling codes: an app's (4), a user's (17), a Page's (32) and the hourly (613) call
    /// limits, and the Business Use Case limits, 80000 to 80099 (80002: an Instagram account's).
    public static func isThrottling(_ code: Int?) -> Bool {
        guard let code else { return false }
        return [4, 17, 32, 613].contains(code) || (80000...80099).contains(code)
    }

    /// The exception for an error: 190 (the token) `Unauthorized`; a throttling code
    /// `RateLimited` (even when it says `is_transient`); 10 and 200 to 299 (permissions)
    /// `Forbidden`; an object that "does not exist" (subcode 33) `NotFound`; any other
    /// `HTTPError`.
    public static func kind(of error: GraphError) -> APIError.Kind {
        switch error.code {
        case 190?: return .unauthorized
        case let code? where isThrottling(code): return .rateLimited
        case 10?: return .forbidden
        case let code? where (200...299).contains(code): return .forbidden
        default:
            if error.subcode == 33 || error.message?.lowercased().contains("does not exist") == true {
                return .notFound
            }
            return .http
        }
    }

    /// The exception kind for `response`, when it holds an envelope; nil to go by its status.
    @Sendable public static func kind(_ response: Response) -> APIError.Kind? {
        error(in: response).map(kind(of:))
    }

    /// What a 190 error adds: how to log in again.
    public static let loginAgain =
        "log in again: apimacro login instagram (or set APIMACRO_INSTAGRAM_TOKEN to a new token)"

    /// The error's message, with its code and what to do for an expired or invalid token; the
    /// older shape's `error_type: error_message`; nil when neither is there.
    @Sendable public static func message(_ response: Response) -> String? {
        if let error = error(in: response) {
            var text = error.message ?? error.type ?? "Graph API error"
            if let code = error.code {
                text += " (code \(code)\(error.subcode.map { ", subcode \($0)" } ?? ""))"
            }
            if error.code == 190 { text += "; " + loginAgain }
            return text
        }
        let type = JSONPath.string(in: response.body, path: ["error_type"])
        let text = JSONPath.string(in: response.body, path: ["error_message"])
        switch (type, text) {
        case (let type?, let text?): return "\(type): \(text)"
        case (nil, let text?): return text
        case (let type?, nil): return type
        default: return nil
        }
    }

    /// `code`, `subcode` and `fbtrace_id` for the exception (None when the body has none).
    @Sendable public static func details(_ response: Response) -> [APIError.Detail] {
        let error = error(in: response)
        return [
            APIError.Detail("code", error?.code.map { .int($0) } ?? .none),
            APIError.Detail("subcode", error?.subcode.map { .int($0) } ?? .none),
            APIError.Detail("fbtrace_id", error?.traceID.map { .string($0) } ?? .none),
        ]
    }

    /// Whether an error answer is worth sending again: it says `is_transient`, and it is not a
    /// rate limit (those wait for the usage to drop, `InstagramGraphUsage`).
    @Sendable public static func isTransient(_ response: Response) -> Bool {
        guard let error = error(in: response) else { return false }
        return error.isTransient && !isThrottling(error.code)
    }

    /// Whether an answer is a rate limit by its code.
    @Sendable public static func isThrottled(_ response: Response) -> Bool {
        isThrottling(error(in: response)?.code)
    }

    /// A JSON number that is a whole number in `Int`'s range (an envelope's code), or nil.
    static func integer(_ value: Any?) -> Int? {
        guard let double = number(value), double.rounded() == double, abs(double) < 1e15 else { return nil }
        return Int(double)
    }

    /// A finite JSON number (not `true` or `false`), or nil.
    static func number(_ value: Any?) -> Double? {
        guard let double = JSONValue.number(value) else { return nil }
        return double.isFinite ? double : nil
    }
}
