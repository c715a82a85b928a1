import Platform
import WebAPI

/// The parameters of the URL a browser ended on after an OAuth 2 authorize
/// step: those of the fragment (`#access_token=…`) win over those of the query.
struct RedirectURL {
    /// Decoded parameters, fragment first, then query (first occurrence wins).
    let parameters: [String: String]
    /// The parameter names in the order found (for messages: names only, never values).
    let names: [String]

    /// Parses `text`; throws `.invalidRequest` when it is not an absolute URL.
    init(_ text: String) throws {
        let trimmed = text.trimmingWhitespaceAndNewlines()
        guard let components = URLComponents(string: trimmed), let scheme = components.scheme, !scheme.isEmpty,
            let host = components.host, !host.isEmpty
        else {
            throw APIError(
                .invalidRequest,
                "the redirect is not a URL: paste the whole address the browser ended on, "
                    + "from http:// or https:// to the end (the part after '#' holds the token)")
        }
        var parameters: [String: String] = [:]
        var names: [String] = []
        for part in [components.percentEncodedFragment, components.percentEncodedQuery] {
            for (name, value) in Self.decode(part ?? "") where parameters[name] == nil {
                parameters[name] = value
                names.append(name)
            }
        }
        self.parameters = parameters
        self.names = names
    }

    /// `a=1&b=two+words` → pairs, `+` as space and percent escapes decoded.
    static func decode(_ form: String) -> [(String, String)] {
        form.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            let halves = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let value = halves.count > 1 ? unescape(halves[1]) : ""
            return (unescape(halves[0]), value)
        }
    }

    private static func unescape(_ text: Substring) -> String {
        let spaced = String(text.replacing("+", with: " "))
        return spaced.percentDecoded ?? spaced
    }
}
