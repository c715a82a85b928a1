import Platform
import WebAPI

/// A short URL a macro gave (`https://bit.ly/2WujBe0`): its host and its back-half, the parts
/// Bitly's bitlink (`bit.ly/2WujBe0`) and Shlink's short code are made of.
public struct ShortLinkAddress: Sendable, Equatable {
    /// The host in lower case, with its port when the URL names one.
    public let host: String
    /// The path after the first `/`, percent-decoded, without a trailing `/`.
    public let code: String

    /// The short URL `text`, which must be an absolute http(s) URL with a back-half; else the
    /// `ValueError` (an invalid request) naming `argument`, before any request.
    public init(_ text: String, argument: String) throws {
        try ShortenerClient.validate(text, argument: argument)
        guard let components = URLComponents(string: text), let host = components.host?.lowercased() else {
            throw ShortenerClient.notAURL(text, argument: argument)
        }
        var code = components.path
        while code.hasPrefix("/") { code.removeFirst() }
        while code.hasSuffix("/") { code.removeLast() }
        let segments = code.split(separator: "/", omittingEmptySubsequences: false)
        guard !code.isEmpty, !segments.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }) else {
            throw APIError(
                .invalidRequest,
                "\(argument) must be a short link such as https://bit.ly/2WujBe0, with a back-half after the host, "
                    + "not \(text.debugDescription)", api: Shortener.name)
        }
        self.host = components.port.map { "\(host):\($0)" } ?? host
        self.code = code
    }

    /// Bitly's name for the link: `host/back-half`.
    public var bitlink: String { host + "/" + code }
}
