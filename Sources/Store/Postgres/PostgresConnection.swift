import CPostgres
import Platform
import Synchronization
import WebAPI

/// libpq's functions, loaded with dlopen on the first connection (CPostgres/shim.h), or why not.
nonisolated(unsafe) private let libpq: (table: UnsafeMutablePointer<cpq_api>, failure: String?) = {
    let table = UnsafeMutablePointer<cpq_api>.allocate(capacity: 1)
    table.initialize(to: cpq_api())
    return (table, cpq_load(table).map { String(cString: $0) })
}()

/// A `postgresql://` URL as apimacro shows it: the password (in the user part or a `password=`
/// parameter) replaced by `***`, so no message, log or report ever holds it.
public enum PostgresURL {
    /// Whether `text` names a PostgreSQL server (`postgresql://` or `postgres://`).
    public static func isPostgres(_ text: String) -> Bool {
        let lower = text.lowercased()
        return lower.hasPrefix("postgresql://") || lower.hasPrefix("postgres://")
    }

    /// `url` with its password replaced by `***`.
    public static func redacted(_ url: String) -> String {
        guard let scheme = url.firstRange(of: "://") else { return url }
        let rest = url[scheme.upperBound...]
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        var authority = String(rest[..<authorityEnd])
        var tail = String(rest[authorityEnd...])
        if let at = authority.lastIndex(of: "@") {
            let user = authority[..<at]
            if let colon = user.firstIndex(of: ":") {
                authority = String(user[..<colon]) + ":***" + String(authority[at...])
            }
        }
        if let query = tail.firstIndex(of: "?") {
            let parameters = tail[tail.index(after: query)...].split(separator: "&", omittingEmptySubsequences: false)
            let shown = parameters.map { parameter -> String in
                parameter.lowercased().hasPrefix("password=") ? "password=***" : String(parameter)
            }
            tail = String(tail[..<query]) + "?" + shown.joined(separator: "&")
        }
        return String(url[..<scheme.upperBound]) + authority + tail
    }

    /// The password written in `url`, percent-decoded (to scrub it from libpq's messages), or nil.
    static func password(_ url: String) -> String? {
        guard let scheme = url.firstRange(of: "://") else { return nil }
        let rest = url[scheme.upperBound...]
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        guard let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") else {
            return nil
        }
        let raw = String(authority[authority.index(after: colon)..<at])
        return raw.isEmpty ? nil : (raw.percentDecoded ?? raw)
    }
}

/// One connection to a PostgreSQL server through libpq, used by one caller at a time (its
/// lock is held for a whole transaction); reconnects when the server dropped it.
public final class PostgresConnection: Sendable {
    /// The URL with its password redacted, for every message.
    public let shown: String
    private let url: String
    private let password: String?
    private let timeout: Double
    private let handle: Mutex<Handle>

    /// libpq's `PGconn *`, touched only under the connection's lock.
    private struct Handle: @unchecked Sendable {
        var pointer: OpaquePointer?
    }

    /// The open connections of this process, by URL: a run (and each `--every` cycle) reuses them.
    private static let pool = Mutex<[String: PostgresConnection]>([:])

    private init(url: String, timeout: Double, pointer: OpaquePointer) {
        self.url = url
        self.timeout = timeout
        shown = PostgresURL.redacted(url)
        password = PostgresURL.password(url)
        handle = Mutex(Handle(pointer: pointer))
    }

    deinit {
        handle.withLock { handle in
            if let pointer = handle.pointer { cpq_finish(libpq.table, pointer) }
            handle.pointer = nil
        }
    }

    /// The process's connection to `url`, opened now when there is none (waiting up to
    /// `timeout` seconds for the server, unless the URL sets `connect_timeout`).
    ///
    /// - Throws: `StoreError` (`.unreachable`) naming the server (password redacted) and what to do.
    public static func shared(_ url: String, timeout: Double = 10) throws -> PostgresConnection {
        if let open = pool.withLock({ $0[url] }) { return open }
        let pointer = try open(url, timeout: timeout)
        let connection = PostgresConnection(url: url, timeout: timeout, pointer: pointer)
        return pool.withLock { pool in
            if let other = pool[url] { return other }
            pool[url] = connection
            return connection
        }
    }

    private static func open(_ url: String, timeout: Double) throws -> OpaquePointer {
        if let failure = libpq.failure {
            throw StoreError.unreachable(
                "cannot load libpq, which apimacro talks to PostgreSQL with (\(failure)): install it "
                    + "(Debian and Ubuntu: apt-get install libpq5); nothing was sent or written")
        }
        let seconds = String(max(2, Int(timeout.rounded(.up))))
        let keywords = ["connect_timeout", "application_name", "dbname"]
        let values = [seconds, "apimacro", url]
        let pointer = withCStrings(keywords) { keywordPointers in
            withCStrings(values) { valuePointers in
                cpq_connectdbParams(libpq.table, keywordPointers, valuePointers, 1)
            }
        }
        guard let pointer else { throw StoreError.unreachable("cannot reach PostgreSQL: out of memory") }
        // The server's notices ("relation … already exists, skipping") are not the user's business.
        cpq_setNoticeProcessor(libpq.table, pointer, { _, _ in }, nil)
        guard cpq_status(libpq.table, pointer) == CONNECTION_OK else {
            let reason = message(cpq_errorMessage(libpq.table, pointer), scrubbing: PostgresURL.password(url))
            cpq_finish(libpq.table, pointer)
            throw StoreError.unreachable(
                "cannot reach PostgreSQL at \(PostgresURL.redacted(url)): \(reason); nothing was sent or written. "
                    + "Start the server, or fix the URL (postgresql://user:password@host:port/database)")
        }
        return pointer
    }

    /// Runs `body` on the connection in one transaction (`BEGIN` … `COMMIT`; `ROLLBACK` when
    /// `body` or the commit throws), holding the connection's lock throughout.
    public func transaction<T>(_ body: (PostgresSession) throws -> T) throws -> T {
        try handle.withLock { handle in
            let session = try self.session(&handle)
            _ = try session.execute("BEGIN")
            do {
                let result = try body(session)
                _ = try session.execute("COMMIT")
                return result
            } catch {
                _ = try? session.execute("ROLLBACK")
                throw error
            }
        }
    }

    /// Runs `body` on the connection outside any transaction (each statement its own).
    public func withSession<T>(_ body: (PostgresSession) throws -> T) throws -> T {
        try handle.withLock { handle in try body(try self.session(&handle)) }
    }

    private func session(_ handle: inout Handle) throws -> PostgresSession {
        if let pointer = handle.pointer, cpq_status(libpq.table, pointer) == CONNECTION_OK {
            return PostgresSession(pointer: pointer, shown: shown, password: password)
        }
        if let pointer = handle.pointer { cpq_finish(libpq.table, pointer) }
        handle.pointer = nil
        let pointer = try Self.open(url, timeout: timeout)
        handle.pointer = pointer
        return PostgresSession(pointer: pointer, shown: shown, password: password)
    }

    /// libpq's text of a message, trimmed, with `password` (if it ever appeared) redacted.
    static func message(_ text: UnsafePointer<CChar>?, scrubbing password: String?) -> String {
        var message = text.map { String(cString: $0) } ?? "unknown error"
        message = message.trimmingWhitespaceAndNewlines()
        message = message.replacingLiteral("\n", with: " ").replacingLiteral("\t", with: "")
        if let password, !password.isEmpty { message = message.replacingLiteral(password, with: "***") }
        return message
    }
}

/// The connection while its lock is held: statements with parameters.
public struct PostgresSession {
    fileprivate let pointer: OpaquePointer
    /// The server's URL, password redacted.
    public let shown: String
    fileprivate let password: String?

    /// What a statement returned: its rows (text, nil for NULL) and how many rows it changed.
    public struct Result {
        public var rows: [[String?]]
        public var affected: Int
    }

    /// Runs `sql` with `parameters` ($1, $2, … as text, nil for NULL: the server gives each the
    /// type its place asks for) through `PQexecParams`: values never become SQL text.
    ///
    /// - Throws: `StoreError` (`.io`) with the server's message and its SQLSTATE.
    @discardableResult
    public func execute(_ sql: String, _ parameters: [String?] = []) throws -> Result {
        let result: OpaquePointer? = withOptionalCStrings(parameters) { values in
            cpq_execParams(libpq.table, pointer, sql, Int32(parameters.count), nil, values, nil, nil, 0)
        }
        guard let result else {
            throw StoreError.io(
                "PostgreSQL at \(shown) failed: \(PostgresConnection.message(cpq_errorMessage(libpq.table, pointer), scrubbing: password))"
            )
        }
        defer { cpq_clear(libpq.table, result) }
        let status = cpq_resultStatus(libpq.table, result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            let code =
                cpq_resultErrorField(libpq.table, result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) } ?? ""
            let text = PostgresConnection.message(cpq_resultErrorMessage(libpq.table, result), scrubbing: password)
            throw StoreError(
                code == "40001" || code == "40P01" ? .conflict : .io,
                "PostgreSQL at \(shown) refused a statement: \(text)\(code.isEmpty ? "" : " (SQLSTATE \(code))")")
        }
        var rows: [[String?]] = []
        let count = cpq_ntuples(libpq.table, result)
        let fields = cpq_nfields(libpq.table, result)
        if count > 0 {
            rows.reserveCapacity(Int(count))
            for row in 0..<count {
                var values: [String?] = []
                for field in 0..<fields {
                    if cpq_getisnull(libpq.table, result, row, field) == 1 {
                        values.append(nil)
                    } else {
                        values.append(String(cString: cpq_getvalue(libpq.table, result, row, field)))
                    }
                }
                rows.append(values)
            }
        }
        let affected = Int(String(cString: cpq_cmdTuples(libpq.table, result))) ?? 0
        return Result(rows: rows, affected: affected)
    }
}

/// Runs `body` with `strings` as a NULL-terminated array of C strings (alive during the call).
private func withCStrings<T>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> T) -> T {
    withOptionalCStrings(strings.map { $0 }, body)
}

/// Runs `body` with `strings` as C strings (nil stays NULL) followed by a NULL, alive during the call.
private func withOptionalCStrings<T>(_ strings: [String?], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> T) -> T {
    let copies: [UnsafeMutablePointer<CChar>?] = strings.map { $0.map { strdup($0) } ?? nil } + [nil]
    defer { for copy in copies { free(copy) } }
    let pointers: [UnsafePointer<CChar>?] = copies.map { $0.map { UnsafePointer($0) } }
    return body(pointers)
}
