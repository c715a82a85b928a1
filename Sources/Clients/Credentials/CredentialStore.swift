public import Foundation
public import WebAPI

/// The tokens `apimacro login` obtained, in `<APIMACRO_HOME>/credentials.json`
/// (mode 0600): `{"NAME": {"token": …, "kind": "access_token|api_key",
/// "obtained_at": EPOCH, "expires_at": EPOCH, "scope": …, "refresh_token": …,
/// "refresh_expires_at": EPOCH}}` (`expires_at`, `scope` and the refresh token when known).
///
/// It refuses a file others can read or write, and no token ever appears in its
/// errors or descriptions.
public struct CredentialStore: Sendable, CustomStringConvertible {
    /// One stored credential.
    public struct Entry: Sendable {
        /// The token itself (prints `REDACTED`).
        public let token: Secret
        /// `access_token` or `api_key`.
        public let kind: String
        /// When it was obtained, in epoch seconds.
        public let obtainedAt: Int
        /// The scope granted, when the provider said.
        public let scope: String?
        /// When it expires, in epoch seconds, when known (Instagram's 60-day tokens).
        public let expiresAt: Int?
        /// The token that renews it, when the provider gave one (a GitHub App's user token).
        public var refreshToken: Secret? = nil
    }

    /// The folder (`$APIMACRO_HOME`).
    public let home: URL

    /// Keeps credentials in `home/credentials.json`.
    public init(home: URL) { self.home = home }

    /// `<home>/credentials.json`.
    public var path: URL { home.appendingPathComponent("credentials.json") }

    /// The file's path, never its contents.
    public var description: String { "CredentialStore(\(path.path))" }

    /// The token stored for `name`, or nil when there is none.
    public func token(for name: String) throws -> Secret? {
        try entry(for: name)?.token
    }

    /// The whole entry stored for `name`, or nil when there is none.
    public func entry(for name: String) throws -> Entry? {
        guard let raw = try load()[name] else { return nil }
        guard let fields = raw as? [String: Any], let token = fields["token"] as? String, !token.isEmpty else {
            throw APIError(
                .auth,
                "the entry \"\(name)\" in \(path.path) is corrupt; run: apimacro logout \(name), then log in again")
        }
        let obtained = Self.epoch(fields["obtained_at"]) ?? 0
        let refresh = (fields["refresh_token"] as? String).flatMap { $0.isEmpty ? nil : Secret($0) }
        return Entry(
            token: Secret(token), kind: fields["kind"] as? String ?? "access_token", obtainedAt: obtained,
            scope: fields["scope"] as? String, expiresAt: Self.epoch(fields["expires_at"]), refreshToken: refresh)
    }

    /// A time in epoch seconds from the file: a finite number within 10,000 years, else nil (a
    /// hand-edited `1e300` must not trap).
    static func epoch(_ value: Any?) -> Int? {
        guard let number = (value as? NSNumber)?.doubleValue, number.isFinite, abs(number) < 3e11 else { return nil }
        return Int(number)
    }

    /// The names that have a stored credential, sorted.
    public func names() throws -> [String] {
        try load().keys.sorted()
    }

    /// Stores `token` for `name` (replacing any previous one, keeping the others), obtained at
    /// `obtainedAt` (default now) and expiring at `expiresAt` when known, with the
    /// `refreshToken` that renews it (expiring at `refreshExpiresAt`) when the provider gave one.
    ///
    /// Creates `home` (mode 0700) when missing; the file ends with mode 0600
    /// whatever the umask, and is replaced atomically.
    public func save(
        _ token: Secret, for name: String, kind: String, scope: String? = nil, expiresAt: Int? = nil,
        obtainedAt: Int = Int(Date().timeIntervalSince1970), refreshToken: Secret? = nil, refreshExpiresAt: Int? = nil
    ) throws {
        guard !name.isEmpty else { throw APIError(.invalidRequest, "a credential needs a name (github, instagram, …)") }
        guard token.revealed.utf8.count <= Self.tokenLimit else {
            throw APIError(
                .auth,
                "refusing to store a \(name) token of \(token.revealed.utf8.count) bytes (a token is at most "
                    + "\(Self.tokenLimit >> 10) KiB): nothing was changed; log in again")
        }
        var all = try load()
        var fields: [String: Any] = ["token": token.revealed, "kind": kind, "obtained_at": obtainedAt]
        if let scope { fields["scope"] = scope }
        if let expiresAt { fields["expires_at"] = expiresAt }
        if let refreshToken, refreshToken.revealed.utf8.count <= Self.tokenLimit {
            fields["refresh_token"] = refreshToken.revealed
            if let refreshExpiresAt { fields["refresh_expires_at"] = refreshExpiresAt }
        }
        all[name] = fields
        try write(all)
    }

    /// Forgets the credential of `name`; true if there was one.
    ///
    /// A file that is not valid JSON is refused with `load`'s error and left
    /// alone: it may still hold everyone else's tokens, for the user to repair.
    @discardableResult
    public func remove(_ name: String) throws -> Bool {
        let all = try load()
        guard all[name] != nil else { return false }
        var rest = all
        rest[name] = nil
        if rest.isEmpty { try SecureFile.remove(path) } else { try write(rest) }
        return true
    }

    /// The file's top-level object; empty when the file does not exist.
    private func load() throws -> [String: Any] {
        guard let object = try parsed() else {
            throw APIError(
                .auth,
                "cannot use the credential file \(path.path): it is not valid JSON (nothing was read from it or "
                    + "changed in it); repair it, or move it aside (it may hold tokens you want to keep) and log in again"
            )
        }
        return object
    }

    /// The file's top-level object (empty when there is no file), or nil when it is not a JSON object.
    private func parsed() throws -> [String: Any]? {
        guard let bytes = try SecureFile.contents(of: path) else { return [:] }
        return try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]
    }

    /// The longest token stored: 16 KiB (GitHub's and Meta's are a few hundred bytes).
    ///
    /// A longer one is refused before anything is written, so no answer can fill the file.
    public static let tokenLimit = 16 << 10

    private func write(_ all: [String: Any]) throws {
        guard let data = try? JSONSerialization.data(withJSONObject: all, options: [.prettyPrinted, .sortedKeys]) else {
            throw APIError(.invalidRequest, "the credentials could not be encoded as JSON")
        }
        // A file apimacro would refuse to read locks out every stored login: never write one.
        guard data.count + 1 <= SecureFile.sizeLimit else {
            throw APIError(
                .auth,
                "refusing to write \(path.path): it would be larger than \(SecureFile.sizeLimit >> 20) MiB, "
                    + "which apimacro does not read; nothing was changed (apimacro logout NAME removes a login)")
        }
        try SecureFile.ensureDirectory(home)
        try SecureFile.replace(path, with: Array(data) + [0x0A])
    }
}
