public import Platform
import Synchronization

/// Collects the exchanges of a run (`--record FILE.har`) and writes them as
/// HAR 1.2 with every credential replaced by `REDACTED`.
///
/// Entries are kept in memory and written by `write()`, which the runner calls
/// when the macro ends, however it ends (also before a hard exit on
/// `--timeout`).
public final class HARRecorder: Sendable {
    /// Where the file goes.
    public let file: URL
    private let creator: HAR.Creator
    private let entries = Mutex<[HAR.Entry]>([])

    /// - Parameters:
    ///   - file: where `write()` puts the HAR file.
    ///   - version: apimacro's version, for `creator`.
    public init(file: URL, version: String) {
        self.file = file
        self.creator = HAR.Creator(name: "apimacro", version: version)
    }

    /// How many exchanges are recorded so far.
    public var count: Int { entries.withLock { $0.count } }

    /// Records one exchange, redacted with `redactor`.
    public func add(
        _ exchange: Exchange, _ response: Response, started: Date, milliseconds: Double, redactor: Redactor,
        account: String? = nil
    ) {
        var entry = HARRecorder.entry(
            exchange, response, started: started, milliseconds: milliseconds, redactor: redactor)
        if let account {
            entry.comment = [entry.comment, "account \(account)"].compactMap { $0 }.joined(separator: "; ")
        }
        entries.withLock { $0.append(entry) }
    }

    /// Writes the file (atomically: a reader never sees half of it).
    ///
    /// - Throws: `APIError` (`invalidRequest`) naming the file and why it could not be written.
    public func write() throws {
        let har = HAR(log: HAR.Log(version: "1.2", creator: creator, entries: entries.withLock { $0 }))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        do {
            try encoder.encode(har).write(to: file, options: .atomic)
        } catch {
            throw Self.cannotWrite(file, SystemErrorText.reason(error))
        }
    }

    /// Checks, before anything runs, that `write()` will be able to write `file`: its folder
    /// exists and takes a new file (the atomic write makes one beside it, then renames it), and
    /// `file` is not a folder.
    ///
    /// A run that records then fails before the macro starts, instead of losing what it
    /// fetched at the end. Nothing is left behind.
    ///
    /// - Throws: `APIError` (`invalidRequest`, a usage error) naming the file and why.
    public static func checkWritable(_ file: URL) throws {
        var isFolder = false
        if FileManager.default.fileExists(atPath: file.path, isDirectory: &isFolder), isFolder {
            throw cannotWrite(file, "it is a folder")
        }
        let probe = file.deletingLastPathComponent().appendingPathComponent(
            ".\(file.lastPathComponent).\(UUID().uuidString).probe")
        let descriptor = open(probe.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw cannotWrite(file, String(cString: strerror(errno))) }
        close(descriptor)
        unlink(probe.path)
    }

    private static func cannotWrite(_ file: URL, _ reason: String) -> APIError {
        APIError(.invalidRequest, "cannot write the HAR file \(file.path): \(reason)")
    }

    static func entry(
        _ exchange: Exchange, _ response: Response, started: Date, milliseconds: Double, redactor: Redactor
    ) -> HAR.Entry {
        // The credentials this request carries by name, wherever the server echoes them.
        let redactor = redactor.adding(credentialsOf: exchange)
        let url = redactor.redactURL(exchange.url)
        let query = URLComponents(string: url)?.percentEncodedQueryItems?.map {
            HAR.NameValue(name: $0.name, value: $0.value ?? "")
        }
        let requestBody = body(exchange.body, redactor: redactor)
        let postData =
            exchange.body.isEmpty && !["POST", "PUT", "PATCH"].contains(exchange.method)
            ? nil
            : HAR.PostData(
                mimeType: exchange.headers["Content-Type"] ?? "", text: requestBody.text, encoding: requestBody.encoding
            )
        let responseBody = body(response.body, redactor: redactor)
        return HAR.Entry(
            startedDateTime: UTCDateText.iso8601(started),
            time: milliseconds,
            request: HAR.Request(
                method: exchange.method, url: url, httpVersion: "HTTP/1.1", cookies: [],
                headers: headers(exchange.headers, redactor: redactor), queryString: query ?? [], postData: postData,
                headersSize: -1, bodySize: exchange.body.count),
            response: HAR.Response(
                status: response.status, statusText: HTTPStatus.reason(response.status), httpVersion: "HTTP/1.1",
                cookies: [],
                headers: headers(response.headers, redactor: redactor),
                content: HAR.Content(
                    size: response.body.count, mimeType: response.headers["Content-Type"] ?? "",
                    text: responseBody.text,
                    encoding: responseBody.encoding),
                redirectURL: response.headers["Location"].map { redactor.redactURL($0) } ?? "", headersSize: -1,
                bodySize: response.source == .network ? response.body.count : 0),
            cache: HAR.Cache(),
            timings: HAR.Timings(total: milliseconds, timing: response.timing),
            comment: response.source == .network ? nil : response.source.rawValue)
    }

    /// Header values redacted (`Redactor.redactHeader`): a header the credential rule names keeps
    /// only its scheme (`Bearer REDACTED`).
    static func headers(_ headers: Headers, redactor: Redactor) -> [HAR.NameValue] {
        headers.map { HAR.NameValue(name: $0.name, value: redactor.redactHeader(name: $0.name, value: $0.value)) }
    }

    /// A body as HAR text: redacted UTF-8, or base64 when it is not UTF-8.
    static func body(_ bytes: [UInt8], redactor: Redactor) -> (text: String?, encoding: String?) {
        if bytes.isEmpty { return ("", nil) }
        if let text = utf8Text(bytes) {
            return (redactor.redact(text), nil)
        }
        return (Data(bytes).base64EncodedString(), "base64")
    }

    /// The bytes as text when they are valid UTF-8 without NULs, else nil.
    static func utf8Text(_ bytes: [UInt8]) -> String? {
        guard !bytes.contains(0), let text = String(bytes: bytes, encoding: .utf8) else { return nil }
        return text
    }
}
