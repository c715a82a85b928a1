public import WebAPI

/// Instagram v1's envelope: `{"meta": {"code", "error_type", "error_message"}, "data", "pagination": {"next_url"}}`.
public enum InstagramEnvelope {
    /// Where an answer's payload is (a page's items, for a list).
    public static let dataPath = ["data"]
    /// Where the next page's URL is.
    public static let nextURLPath = ["pagination", "next_url"]
    /// Where the answer's status is.
    public static let metaPath = ["meta"]
    /// The status code: 200 for success.
    public static let codePath = metaPath + ["code"]
    /// The error's type (`OAuthAccessTokenException`), which picks the exception class.
    public static let errorTypePath = metaPath + ["error_type"]
    /// The error's message.
    public static let errorMessagePath = metaPath + ["error_message"]

    /// The exception kind for a `meta.error_type`.
    public static func kind(errorType: String?, code: Int?) -> APIError.Kind? {
        switch errorType {
        case "OAuthAccessTokenException", "OAuthPermissionsException", "OAuthException": return .unauthorized
        case "OAuthRateLimitException": return .rateLimited
        case "APINotFoundError": return .notFound
        case .some: return .http
        case .none: return code.map { $0 == 200 ? nil : .http } ?? nil
        }
    }

    /// `meta.error_type: meta.error_message`, for error messages.
    public static func message(_ response: Response) -> String? {
        let type = JSONPath.string(in: response.body, path: errorTypePath)
        let text = JSONPath.string(in: response.body, path: errorMessagePath)
        switch (type, text) {
        case (let type?, let text?): return "\(type): \(text)"
        case (nil, let text?): return text
        case (let type?, nil): return type
        default: return nil
        }
    }
}
