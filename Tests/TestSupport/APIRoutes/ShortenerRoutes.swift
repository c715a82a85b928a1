import Foundation
import Synchronization

/// Google URL Shortener v1 under `/urlshortener/v1` (a client's base URL is `<baseURL>/urlshortener/v1`).
///
/// - `POST url?key=KEY` with `{"longUrl": …}`: `{"kind", "id": "https://goo.gl/<code>", "longUrl"}`
/// - `GET url?shortUrl=…[&key=KEY]`: `{"kind", "id", "longUrl", "status": "OK"}`, or 404; with
///   `projection=ANALYTICS_CLICKS` (or `FULL`) also `analytics.allTime.shortUrlClicks`
///
/// `AIza-test-key` is the only valid key. Codes are 6 base-62 characters of a hash of the long URL,
/// and each server remembers the URLs it shortened (plus Google's documented `fbsS` example).
struct ShortenerRoutes: RouteHandler {
    static let prefix = "/urlshortener/v1"
    static let validKey = "AIza-test-key"
    static let shortHost = "goo.gl"

    let store = ShortURLStore()

    func respond(to request: RouteRequest) -> Response? {
        if request.match("POST", ShortenerRoutes.prefix + "/url") != nil { return shorten(request) }
        if request.match("GET", ShortenerRoutes.prefix + "/url") != nil { return expand(request) }
        return nil
    }

    private func shorten(_ request: RouteRequest) -> Response {
        guard let key = request.query["key"] else { return GoogleError.dailyLimitUnregistered }
        guard key == ShortenerRoutes.validKey else { return GoogleError.keyInvalid }
        guard let body = try? JSON(parsing: request.recorded.body), let longURL = body["longUrl"]?.stringValue else {
            return GoogleError.parameter(reason: "required", message: "Required", location: "resource.longUrl")
        }
        guard ShortenerRoutes.isWebURL(longURL) else {
            return GoogleError.parameter(reason: "invalid", message: "Invalid Value", location: "resource.longUrl")
        }
        let code = store.shorten(longURL)
        return .json(
            .object([
                ("kind", .string("urlshortener#url")),
                ("id", .string("https://\(ShortenerRoutes.shortHost)/\(code)")),
                ("longUrl", .string(longURL)),
            ]))
    }

    private func expand(_ request: RouteRequest) -> Response {
        if let key = request.query["key"], key != ShortenerRoutes.validKey { return GoogleError.keyInvalid }
        guard let shortURL = request.query["shortUrl"], !shortURL.isEmpty else {
            return GoogleError.parameter(reason: "required", message: "Required", location: "shortUrl")
        }
        guard let code = ShortenerRoutes.code(of: shortURL) else {
            return GoogleError.parameter(reason: "invalid", message: "Invalid Value", location: "shortUrl")
        }
        guard let longURL = store.longURL(code: code) else { return GoogleError.notFound }
        var members: [(String, JSON)] = [
            ("kind", .string("urlshortener#url")), ("id", .string(shortURL)), ("longUrl", .string(longURL)),
            ("status", .string("OK")),
        ]
        if ["ANALYTICS_CLICKS", "FULL"].contains(request.query["projection"] ?? "") {
            // The url resource's documented `analytics` (counts as strings); only the seeded
            // example has been clicked.
            let clicks = JSON.string(code == "fbsS" ? "1234" : "0")
            members.append(
                ("analytics", .object([("allTime", .object([("shortUrlClicks", clicks), ("longUrlClicks", clicks)]))])))
        }
        return .json(.object(members))
    }

    /// Whether `text` is an absolute http or https URL with a host.
    static func isWebURL(_ text: String) -> Bool {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = components.host, !host.isEmpty
        else { return false }
        return true
    }

    /// The code of `http(s)://goo.gl/<code>`, or nil for any other URL.
    static func code(of shortURL: String) -> String? {
        guard let components = URLComponents(string: shortURL), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https", components.host?.lowercased() == shortHost
        else { return nil }
        let code = components.path.trimmed(of: "/")
        guard !code.isEmpty, !code.contains("/") else { return nil }
        return code
    }
}

/// The short codes one server has handed out (code → long URL).
final class ShortURLStore: Sendable {
    /// Google's documented example, known before anything is shortened.
    static let seeded = ["fbsS": "http://www.google.com/"]
    static let codeLength = 6
    private static let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")

    private let codes = Mutex<[String: String]>(ShortURLStore.seeded)

    /// The code for `longURL`: the same one every time for the same URL (a hash, re-salted in the
    /// unlikely case it is taken by another URL), remembered for ``longURL(code:)``.
    func shorten(_ longURL: String) -> String {
        codes.withLock { codes in
            var salt: UInt64 = 0
            while true {
                let code = ShortURLStore.code(for: longURL, salt: salt)
                switch codes[code] {
                case nil:
                    codes[code] = longURL
                    return code
                case longURL:
                    return code
                default:
                    salt += 1
                }
            }
        }
    }

    /// The long URL a code stands for, if this server knows it.
    func longURL(code: String) -> String? { codes.withLock { $0[code] } }

    /// Six base-62 digits of a 64-bit FNV-1a hash of the URL (and the salt).
    static func code(for longURL: String, salt: UInt64) -> String {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325 ^ salt
        for byte in longURL.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        var digits: [Character] = []
        for _ in 0..<codeLength {
            digits.append(alphabet[Int(hash % UInt64(alphabet.count))])
            hash /= UInt64(alphabet.count)
        }
        return String(digits)
    }
}

/// Google APIs' error body: `{"error": {"errors": [{…}], "code": N, "message": …}}`.
enum GoogleError {
    static func response(status: Int, message: String, error: [(String, JSON)]) -> Response {
        .json(
            .object([
                (
                    "error",
                    .object([
                        ("errors", .array([.object(error)])), ("code", .int(status)), ("message", .string(message)),
                    ])
                )
            ]), status: status)
    }

    /// 400 for a key that is not valid.
    static let keyInvalid = response(
        status: 400, message: "Bad Request",
        error: [
            ("domain", .string("usageLimits")), ("reason", .string("keyInvalid")), ("message", .string("Bad Request")),
        ])

    /// 403 for a call that needs a key and has none.
    static let dailyLimitUnregistered: Response = {
        let message = "Daily Limit for Unauthenticated Use Exceeded. Continued use requires signup."
        return response(
            status: 403, message: message,
            error: [
                ("domain", .string("usageLimits")), ("reason", .string("dailyLimitExceededUnreg")),
                ("message", .string(message)), ("extendedHelp", .string("https://code.google.com/apis/console")),
            ])
    }()

    /// 404 for an unknown short URL.
    static let notFound = response(
        status: 404, message: "Not Found",
        error: [("domain", .string("global")), ("reason", .string("notFound")), ("message", .string("Not Found"))])

    /// 400 for a missing (`required`) or malformed (`invalid`) parameter.
    static func parameter(reason: String, message: String, location: String) -> Response {
        response(
            status: 400, message: message,
            error: [
                ("domain", .string("global")), ("reason", .string(reason)), ("message", .string(message)),
                ("locationType", .string("parameter")), ("location", .string(location)),
            ])
    }
}
