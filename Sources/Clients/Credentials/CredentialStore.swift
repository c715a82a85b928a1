public import Platform
public import WebAPI

/// The tokens `apimacro login` obtained, in `<APIMACRO_HOME>/credentials.json`
/// (mode 0600), by client name and account label.
///
/// Each client's entry is its active account's fields at the top level (so a file written by
/// an older apimacro, and an older apimacro reading this one, still finds the token there),
/// its label under `account` (a file from before accounts has none: its login reads as the
/// account `default`, and gets that label the next time the file is written), and every other
/// account under `other_accounts`:
/// `{"NAME": {"token": …, "kind": "access_token|api_key", "obtained_at": EPOCH,
/// "expires_at": EPOCH, "scope": …, "refresh_token": …, "refresh_expires_at": EPOCH,
/// "user": LOGIN, "account": LABEL, "other_accounts": {LABEL: {…}}}}`.
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
        /// The account's label (`work`, or the service's own login name by default).
        public var account: String = CredentialStore.defaultLabel
        /// Who the service said the token belongs to, when it was asked at login.
        public var user: String? = nil
    }

    /// The accounts stored for one client.
    public struct Accounts: Sendable, Equatable {
        /// The label of the account used unless another is chosen.
        public let active: String
        /// Every label, sorted (the active one among them).
        public let labels: [String]
    }

    /// The label of a login stored before accounts existed, or when the service could not say
    /// whose it is.
    public static let defaultLabel = "default"

    /// The folder (`$APIMACRO_HOME`).
    public let home: URL
    /// The account chosen for this run, by client name (`--account NAME=LABEL`,
    /// `APIMACRO_<NAME>_ACCOUNT`, `as_account`); a client not named uses its active account.
    public let chosen: [String: String]
    /// Where tokens go besides the file: the system keyring, as `APIMACRO_KEYRING` chooses
    /// (`Keyring.none`: the file only).
    ///
    /// An entry kept there holds `"keyring": "secret-service"` instead of its `token` (and
    /// `"refresh_in_keyring": true` instead of its refresh token).
    public let keyring: Keyring

    /// Keeps credentials in `home/credentials.json` (the tokens in `keyring` where it runs),
    /// reading the accounts `chosen` by client name.
    public init(home: URL, chosen: [String: String] = [:], keyring: Keyring = .none) {
        self.home = home
        self.chosen = chosen
        self.keyring = keyring
    }

    /// The same store with `label` chosen for `name`.
    public func choosing(_ label: String, for name: String) -> CredentialStore {
        var chosen = self.chosen
        chosen[name] = label
        return CredentialStore(home: home, chosen: chosen, keyring: keyring)
    }

    /// The marker of a token kept in the system keyring.
    static let keyringMarker = "secret-service"

    /// Where the stored tokens are, for `auth status`: "in the system keyring", "stored in a
    /// file, not a keyring (why)", or both; nil when none is stored.
    public func storage() -> String? {
        guard let all = try? load(), !all.isEmpty else { return nil }
        var inKeyring = false
        var inFile = false
        for name in all.keys {
            for fields in ((try? accountFields(of: name, in: all))?.accounts.values).map(Array.init) ?? [] {
                if fields["keyring"] as? String == Self.keyringMarker { inKeyring = true } else { inFile = true }
            }
        }
        let file =
            "stored in a file, not a keyring (\(path.path), mode 0600: \(keyring.unavailable ?? "the keyring refused them when they were stored"))"
        switch (inKeyring, inFile) {
        case (true, true): return "some in the system keyring (Secret Service), the others " + file
        case (true, false): return "in the system keyring (Secret Service); \(path.path) holds only references"
        default: return file
        }
    }

    /// Whether `error` says a token kept in the keyring could not be read (`keyringProblem`).
    public static func isKeyringProblem(_ error: APIError) -> Bool {
        error.message.contains(" is kept in the system keyring, which ")
    }

    /// Why a token the file says is in the keyring could not be read from it.
    func keyringProblem(_ name: String, _ label: String, _ reason: String) -> APIError {
        APIError(
            .auth,
            "the \(name) token of account \(label) is kept in the system keyring, which \(reason); unlock or start "
                + "the keyring (GNOME Keyring: log in to the desktop session, or gnome-keyring-daemon --unlock), then "
                + "try again: nothing was removed (\(path.path) still refers to it)")
    }

    /// The secret of `kind` (`token`, `refresh`) of `name`'s account `label`: the file's, or the keyring's.
    private func secret(_ fields: [String: Any], _ name: String, _ label: String, kind: String) throws -> Secret? {
        let plain = kind == "token" ? "token" : "refresh_token"
        if let text = fields[plain] as? String, !text.isEmpty { return Secret(text) }
        let kept =
            kind == "token"
            ? fields["keyring"] as? String == Self.keyringMarker : fields["refresh_in_keyring"] as? Bool == true
        guard kept else { return nil }
        do {
            guard let found = try keyring.lookup(client: name, account: label, kind: kind) else {
                throw keyringProblem(name, label, "holds no such token, or is locked and would not say")
            }
            return found
        } catch let failure as Keyring.Failure {
            throw keyringProblem(name, label, "could not be read: \(failure.reason)")
        }
    }

    /// `<home>/credentials.json`.
    public var path: URL { home.appendingPathComponent("credentials.json") }

    /// The file's path, never its contents.
    public var description: String { "CredentialStore(\(path.path))" }

    /// The token stored for `name` (its chosen account, else its active one), or nil when there is none.
    public func token(for name: String) throws -> Secret? {
        try entry(for: name)?.token
    }

    /// The accounts stored for `name`, or nil when there is none.
    public func accounts(of name: String) throws -> Accounts? {
        guard let stored = try accountFields(of: name, in: load()) else { return nil }
        return Accounts(active: stored.active, labels: stored.accounts.keys.sorted())
    }

    /// Whether `label` may name an account: 1 to 64 letters, digits and `.`, `_`, `-`, `@`, `+`,
    /// starting with a letter or digit.
    public static func isLabel(_ label: String) -> Bool {
        guard let first = label.unicodeScalars.first, label.unicodeScalars.count <= 64 else { return false }
        func plain(_ scalar: Unicode.Scalar) -> Bool {
            scalar.isASCII && URLBytes.alphanumeric(UInt8(scalar.value))
        }
        return plain(first) && label.unicodeScalars.allSatisfy { plain($0) || "._-@+".unicodeScalars.contains($0) }
    }

    /// The error for a label that is not one (`isLabel`).
    static func badLabel(_ label: String) -> APIError {
        APIError(
            .invalidRequest,
            "'\(Self.printable(label))' is not an account label: use 1 to 64 letters, digits, "
                + "'.', '_', '-', '@' or '+', starting with a letter or digit (such as work)")
    }

    /// The error for a label `name` has no account under.
    static func unknownAccount(_ label: String, of name: String, known: [String]) -> APIError {
        let have =
            known.isEmpty
            ? "no account is stored for \(name) (run: apimacro login \(name) --account \(label))"
            : "the accounts stored for \(name) are: \(known.joined(separator: ", "))"
        return APIError(.auth, "no \(name) account labelled '\(Self.printable(label))': \(have)")
    }

    /// The whole entry stored for `name` under `account` (default: the chosen account, else the
    /// active one), or nil when `name` has none.
    ///
    /// - Throws: `APIError` for a label `name` has no account under (naming those it has), or
    ///   a corrupt entry.
    public func entry(for name: String, account: String? = nil) throws -> Entry? {
        let all = try load()
        let label = account ?? chosen[name]
        guard let stored = try accountFields(of: name, in: all) else {
            if let label { throw Self.unknownAccount(label, of: name, known: []) }
            return nil
        }
        let wanted = label ?? stored.active
        guard let fields = stored.accounts[wanted] else {
            throw Self.unknownAccount(wanted, of: name, known: stored.accounts.keys.sorted())
        }
        guard let token = try secret(fields, name, wanted, kind: "token") else {
            throw APIError(
                .auth,
                "the entry \"\(name)\" (account \(wanted)) in \(path.path) is corrupt; run: apimacro logout \(name) "
                    + "--account \(wanted), then log in again")
        }
        let obtained = Self.epoch(fields["obtained_at"]) ?? 0
        let refresh = try? secret(fields, name, wanted, kind: "refresh")
        return Entry(
            token: token, kind: fields["kind"] as? String ?? "access_token", obtainedAt: obtained,
            scope: fields["scope"] as? String, expiresAt: Self.epoch(fields["expires_at"]), refreshToken: refresh,
            account: wanted, user: fields["user"] as? String)
    }

    /// Every account's entry of `name`, the active one first (for redaction and `auth status`);
    /// corrupt ones left out.
    public func entries(for name: String) throws -> [Entry] {
        guard let accounts = try accounts(of: name) else { return [] }
        let order = [accounts.active] + accounts.labels.filter { $0 != accounts.active }
        return order.compactMap { try? entry(for: name, account: $0) }
    }

    /// `name`'s entry split into its accounts: the active label and each account's fields.
    ///
    /// - Throws: `APIError` when the entry is not an object with a token.
    private func accountFields(of name: String, in all: [String: Any]) throws -> (
        active: String, accounts: [String: [String: Any]]
    )? {
        guard let raw = all[name] else { return nil }
        guard var fields = raw as? [String: Any],
            (fields["token"] as? String).map({ !$0.isEmpty }) ?? (fields["keyring"] as? String == Self.keyringMarker)
        else {
            throw APIError(
                .auth,
                "the entry \"\(name)\" in \(path.path) is corrupt; run: apimacro logout \(name), then log in again")
        }
        let active = (fields["account"] as? String).flatMap { Self.isLabel($0) ? $0 : nil } ?? Self.defaultLabel
        let others = fields["other_accounts"] as? [String: Any] ?? [:]
        fields["account"] = nil
        fields["other_accounts"] = nil
        var accounts: [String: [String: Any]] = [:]
        for (label, value) in others where Self.isLabel(label) && label != active {
            accounts[label] = value as? [String: Any] ?? [:]
        }
        accounts[active] = fields
        return (active, accounts)
    }

    /// `name`'s entry as the file holds it: the active account's fields, its label, the others.
    private static func composed(active: String, accounts: [String: [String: Any]]) -> [String: Any] {
        var fields = accounts[active] ?? [:]
        fields["account"] = active
        let others = accounts.filter { $0.key != active }
        if !others.isEmpty { fields["other_accounts"] = others }
        return fields
    }

    /// A time in epoch seconds from the file: a finite number within 10,000 years, else nil (a
    /// hand-edited `1e300` must not trap).
    static func epoch(_ value: Any?) -> Int? {
        guard let number = JSONValue.number(value), number.isFinite, abs(number) < 3e11 else { return nil }
        return Int(number)
    }

    /// `text` as one safe line for a message: controls escaped, at most 80 characters.
    public static func printable(_ text: String) -> String {
        let shown = String(decoding: TerminalText.escapingControls(Array(text.utf8)), as: UTF8.self)
        return shown.count > 80 ? String(shown.prefix(79)) + "…" : shown
    }

    /// The names that have a stored credential, sorted.
    public func names() throws -> [String] {
        try load().keys.sorted()
    }

    /// Stores `token` for `name` under `account` (default: the chosen account, else the active
    /// one, else `default`), replacing that account's token and keeping every other one,
    /// obtained at `obtainedAt` (default now) and expiring at `expiresAt` when known, with the
    /// `refreshToken` that renews it (expiring at `refreshExpiresAt`) when the provider gave
    /// one, and `user`, whom the service said it belongs to.
    ///
    /// With `activate`, the account becomes the active one (a login); else the active one
    /// stays (a refresh), unless `name` had none.
    ///
    /// Creates `home` (mode 0700) when missing; the file ends with mode 0600
    /// whatever the umask, and is replaced atomically.
    ///
    /// Returns where the token went: "in the system keyring", or "in a file, not a keyring"
    /// and why.
    ///
    /// - Throws: `APIError` for a bad label, or one that already names another person's
    ///   account (`user` differs) or differs from a stored one only in case, or a keyring
    ///   `APIMACRO_KEYRING=required` could not use; nothing is changed then.
    @discardableResult
    public func save(
        _ token: Secret, for name: String, account: String? = nil, user: String? = nil, activate: Bool = false,
        kind: String, scope: String? = nil, expiresAt: Int? = nil,
        obtainedAt: Int = Int(Date().timeIntervalSince1970), refreshToken: Secret? = nil, refreshExpiresAt: Int? = nil
    ) throws -> String {
        guard !name.isEmpty else { throw APIError(.invalidRequest, "a credential needs a name (github, instagram, …)") }
        guard token.revealed.utf8.count <= Self.tokenLimit else {
            throw APIError(
                .auth,
                "refusing to store a \(name) token of \(token.revealed.utf8.count) bytes (a token is at most "
                    + "\(Self.tokenLimit >> 10) KiB): nothing was changed; log in again")
        }
        var all = try load()
        let stored = try accountFields(of: name, in: all)
        let label = account ?? chosen[name] ?? stored?.active ?? Self.defaultLabel
        guard Self.isLabel(label) else { throw Self.badLabel(label) }
        var accounts = stored?.accounts ?? [:]
        if let clash = accounts.keys.first(where: { $0 != label && $0.lowercased() == label.lowercased() }) {
            throw APIError(
                .auth,
                "\(name) already has an account labelled '\(clash)'; two accounts may not share a label "
                    + "(labels differing only in case are one): nothing was changed; pick another --account")
        }
        let previous = accounts[label]
        if let user, let held = previous?["user"] as? String, held != user {
            throw APIError(
                .auth,
                "the \(name) account labelled '\(label)' is \(Self.printable(held)), and this login is "
                    + "\(Self.printable(user)): two accounts may not share a label, so nothing was changed; log in with "
                    + "another --account LABEL, or first run: apimacro logout \(name) --account \(label)")
        }
        var fields: [String: Any] = ["token": token.revealed, "kind": kind, "obtained_at": obtainedAt]
        if let scope { fields["scope"] = scope }
        if let expiresAt { fields["expires_at"] = expiresAt }
        if let refreshToken, refreshToken.revealed.utf8.count <= Self.tokenLimit {
            fields["refresh_token"] = refreshToken.revealed
            if let refreshExpiresAt { fields["refresh_expires_at"] = refreshExpiresAt }
        }
        if let known = user ?? previous?["user"] as? String { fields["user"] = known }
        // The keyring items of the token replaced, when the new one goes to the file.
        var replaced: [(String, String, [String: Any])] = []
        if let previous { replaced.append((name, label, previous)) }
        accounts[label] = fields
        let active = activate ? label : stored?.active ?? label
        all[name] = Self.composed(active: active, accounts: accounts)
        let placed = try write(all, dropping: replaced)
        let now = placed.accounts[name]?[label]
        if now?["keyring"] as? String == Self.keyringMarker { return "in the system keyring" }
        let why = placed.reason ?? keyring.unavailable
        return "in \(path.path) (mode 0600)" + (why.map { "; stored in a file, not a keyring: \($0)" } ?? "")
    }

    /// Makes `label` the active account of `name` (or, with no label, the other one when `name`
    /// has two); returns the label now active.
    ///
    /// - Throws: `APIError` when `name` has no such account (naming those it has), or when no
    ///   label is given and `name` has not exactly two.
    @discardableResult
    public func activate(_ label: String?, for name: String) throws -> String {
        var all = try load()
        guard let stored = try accountFields(of: name, in: all) else {
            throw APIError(.auth, "no account is stored for \(name); run: apimacro login \(name)")
        }
        let labels = stored.accounts.keys.sorted()
        let wanted: String
        if let label {
            guard stored.accounts[label] != nil else { throw Self.unknownAccount(label, of: name, known: labels) }
            wanted = label
        } else {
            guard labels.count == 2, let other = labels.first(where: { $0 != stored.active }) else {
                throw APIError(
                    .invalidRequest,
                    "\(name) has \(labels.count) account\(labels.count == 1 ? "" : "s") (\(labels.joined(separator: ", ")), "
                        + "active: \(stored.active)): name the one to use, as in: apimacro auth switch \(name) LABEL")
            }
            wanted = other
        }
        if wanted != stored.active || all[name].flatMap({ ($0 as? [String: Any])?["account"] }) == nil {
            all[name] = Self.composed(active: wanted, accounts: stored.accounts)
            try write(all)
        }
        return wanted
    }

    /// Forgets the credential of `name` under `account` (default: every account of `name`);
    /// true if there was one.
    ///
    /// When the active account goes and others stay, the first of them by label becomes
    /// active.
    ///
    /// A file that is not valid JSON is refused with `load`'s error and left
    /// alone: it may still hold everyone else's tokens, for the user to repair.
    ///
    /// - Throws: `APIError` for a label `name` has no account under (naming those it has).
    @discardableResult
    public func remove(_ name: String, account: String? = nil) throws -> Bool {
        var all = try load()
        guard all[name] != nil else {
            if let account { throw Self.unknownAccount(account, of: name, known: []) }
            return false
        }
        let before = (try? accountFields(of: name, in: all))?.accounts ?? [:]
        let gone = before.filter { account == nil || $0.key == account }.map { (name, $0.key, $0.value) }
        if let account {
            // A corrupt entry cannot be split into accounts: only forgetting it whole is offered.
            let stored = try accountFields(of: name, in: all)
            guard var accounts = stored?.accounts, let active = stored?.active else { return false }
            guard accounts[account] != nil else {
                throw Self.unknownAccount(account, of: name, known: accounts.keys.sorted())
            }
            accounts[account] = nil
            if let next = accounts.isEmpty ? nil : (account == active ? accounts.keys.sorted().first : active) {
                all[name] = Self.composed(active: next, accounts: accounts)
            } else {
                all[name] = nil
            }
        } else {
            all[name] = nil
        }
        if all.isEmpty {
            try SecureFile.remove(path)
            clearKept(gone)
        } else {
            try write(all, dropping: gone)
        }
        return true
    }

    /// Removes from the keyring the tokens `entries` kept there (best effort: the file no
    /// longer refers to them).
    private func clearKept(_ entries: [(String, String, [String: Any])]) {
        for (name, label, fields) in entries {
            if fields["keyring"] as? String == Self.keyringMarker {
                try? keyring.clear(client: name, account: label, kind: "token")
            }
            if fields["refresh_in_keyring"] as? Bool == true {
                try? keyring.clear(client: name, account: label, kind: "refresh")
            }
        }
    }

    /// Every account's tokens where `keyring` says they go, before the file is written: into
    /// the keyring where it is used (`auto` where it answers, `required`), back into the file
    /// with `off`.
    ///
    /// A token is written to its new place before its old one is cleared, so a move that fails
    /// halfway loses nothing. Returns the entries as they will be written, the items to clear
    /// once the file is, and why the keyring was not used if it was not.
    private func settle(_ all: [String: Any]) throws -> (
        all: [String: Any], accounts: [String: [String: [String: Any]]], clear: [(String, String, String)],
        reason: String?
    ) {
        var all = all
        var every: [String: [String: [String: Any]]] = [:]
        var clear: [(String, String, String)] = []
        var reason = keyring.choice == .off ? nil : keyring.unavailable
        if keyring.choice == .required, let reason {
            throw APIError(
                .auth, "APIMACRO_KEYRING=required, but the keyring cannot be used: \(reason); nothing was changed")
        }
        for name in all.keys.sorted() {
            guard let stored = try? accountFields(of: name, in: all) else { continue }
            var accounts = stored.accounts
            for label in accounts.keys.sorted() {
                guard var fields = accounts[label] else { continue }
                for (kind, plain, marker, value) in [
                    ("token", "token", "keyring", Self.keyringMarker as Any),
                    ("refresh", "refresh_token", "refresh_in_keyring", true as Any),
                ] {
                    let text = (fields[plain] as? String).flatMap { $0.isEmpty ? nil : $0 }
                    let kept = fields[marker] != nil
                    if keyring.choice == .off {
                        // Back into the file: only when the keyring gives it (else the reference stays).
                        guard kept, text == nil,
                            let found = try? keyring.lookup(client: name, account: label, kind: kind)
                        else { continue }
                        fields[plain] = found.revealed
                        fields[marker] = nil
                        clear.append((name, label, kind))
                    } else if let text, reason == nil {
                        do {
                            try keyring.store(Secret(text), client: name, account: label, kind: kind)
                            fields[plain] = nil
                            fields[marker] = value
                        } catch let failure as Keyring.Failure {
                            if keyring.choice == .required {
                                throw APIError(
                                    .auth,
                                    "APIMACRO_KEYRING=required, but the keyring would not store the \(name) token: "
                                        + "\(failure.reason); nothing was changed")
                            }
                            // One failure is enough: the rest stay in the file, with no more waiting.
                            reason = "the keyring would not store it: \(failure.reason)"
                        }
                    }
                }
                accounts[label] = fields
            }
            every[name] = accounts
            all[name] = Self.composed(active: stored.active, accounts: accounts)
        }
        return (all, every, clear, reason)
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
        return JSONValue.parse(Data(bytes))?.object?.mapValues(\.native)
    }

    /// The longest token stored: 16 KiB (GitHub's and Meta's are a few hundred bytes).
    ///
    /// A longer one is refused before anything is written, so no answer can fill the file.
    public static let tokenLimit = 16 << 10

    /// Writes `all`, its tokens settled where the keyring setting says (`settle`), then clears
    /// the keyring items no longer referred to: those moved into the file, and those of
    /// `dropping` (accounts removed, tokens replaced) that the new file does not keep there.
    @discardableResult
    private func write(_ all: [String: Any], dropping: [(String, String, [String: Any])] = []) throws -> (
        accounts: [String: [String: [String: Any]]], reason: String?
    ) {
        let settled = try settle(all)
        try writeFile(settled.all)
        for (name, label, kind) in settled.clear { try? keyring.clear(client: name, account: label, kind: kind) }
        clearKept(
            dropping.filter { name, label, _ in
                settled.accounts[name]?[label]?["keyring"] as? String != Self.keyringMarker
            })
        return (settled.accounts, settled.reason)
    }

    private func writeFile(_ all: [String: Any]) throws {
        guard let data = JSONValue.encoded(native: all, [.prettyPrinted, .sortedKeys]) else {
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
