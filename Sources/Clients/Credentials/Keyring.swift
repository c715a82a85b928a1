import CSecret
public import Platform
public import WebAPI

/// The system keyring `apimacro login` keeps tokens in where one runs (a Secret Service such
/// as GNOME Keyring or KeePassXC, through libsecret loaded at run time), chosen by
/// `APIMACRO_KEYRING`: `off` (the 0600 file only), `auto` (the keyring when one answers, else
/// the file; the default) or `required` (the keyring, or an error).
///
/// Each token is one item with the attributes `application=apimacro`, `home` (the
/// `$APIMACRO_HOME` it belongs to), `client`, `account` and `kind` (`token` or `refresh`).
/// Every call has a deadline (`APIMACRO_KEYRING_TIMEOUT`, default 10 seconds): a keyring that
/// does not answer is a failure, never a hang.
public struct Keyring: Sendable {
    /// `APIMACRO_KEYRING`.
    public enum Choice: String, Sendable, CaseIterable {
        case off, auto, required
    }

    /// Where tokens go.
    public let choice: Choice
    /// The longest one call may take, in seconds.
    public let timeout: Double
    /// The home whose tokens these are (an attribute of each item).
    let home: String
    /// Whether a session bus is there to ask (`DBUS_SESSION_BUS_ADDRESS`, or the user's bus socket).
    let hasBus: Bool

    /// The keyring of `home` as `environment` chooses it.
    ///
    /// - Throws: `APIError` for a value of `APIMACRO_KEYRING` or `APIMACRO_KEYRING_TIMEOUT` that is none.
    public init(home: URL, environment: [String: String]) throws {
        let text = environment["APIMACRO_KEYRING"].map { $0.trimmingWhitespace().lowercased() }
        if let text, !text.isEmpty {
            guard let choice = Choice(rawValue: text) else {
                throw APIError(
                    .invalidRequest,
                    "APIMACRO_KEYRING: '\(text)' is not a keyring choice; accepted: off, auto or required")
            }
            self.choice = choice
        } else {
            choice = .auto
        }
        if let text = environment["APIMACRO_KEYRING_TIMEOUT"], !text.isEmpty {
            guard let seconds = Double(text.trimmingWhitespace()), seconds > 0, seconds <= 600 else {
                throw APIError(
                    .invalidRequest,
                    "APIMACRO_KEYRING_TIMEOUT: '\(text)' is not a number of seconds; accepted: above 0, at most 600")
            }
            timeout = seconds
        } else {
            timeout = 10
        }
        self.home = home.standardizedFileURL.path
        let address = environment["DBUS_SESSION_BUS_ADDRESS"] ?? ""
        let runtime = environment["XDG_RUNTIME_DIR"].map { $0 + "/bus" }
        hasBus = !address.isEmpty || runtime.map { FileManager.default.fileExists(atPath: $0) } ?? false
    }

    /// A keyring that is never used (tests, and commands that store nothing).
    public static let none = Keyring(choice: .off)

    private init(choice: Choice) {
        self.choice = choice
        timeout = 10
        home = ""
        hasBus = false
    }

    /// Why tokens are not stored in the keyring, before asking it: `off`, or it cannot be reached.
    public var unavailable: String? {
        choice == .off ? "APIMACRO_KEYRING=off" : unreachable
    }

    /// Why the keyring cannot be asked at all (a token already in it is still read, moved and
    /// cleared with `off`): no session bus, or no libsecret.
    var unreachable: String? {
        if !hasBus && home.isEmpty { return "no keyring is used here" }
        if !hasBus { return "no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is unset), so no keyring runs" }
        if csecret_load() == nil { return "libsecret-1.so.0 is not installed (Debian: apt install libsecret-1-0)" }
        return nil
    }

    /// The keyring's failure: why it could not be used.
    public struct Failure: Error, Sendable {
        public let reason: String
    }

    private func attributes(client: String, account: String, kind: String) -> [(String, String)] {
        [("application", "apimacro"), ("home", home), ("client", client), ("account", account), ("kind", kind)]
    }

    /// Stores `secret` as `client`'s `kind` (`token`, `refresh`) of `account`.
    ///
    /// - Throws: `Failure` saying why it could not.
    public func store(_ secret: Secret, client: String, account: String, kind: String) throws {
        let result = try call(
            Int32(CSECRET_STORE), attributes(client: client, account: account, kind: kind),
            label: "apimacro: \(client) (account \(account))\(kind == "token" ? "" : " \(kind) token")",
            secret: secret.revealed)
        guard result.ok else { throw Failure(reason: result.error ?? "the keyring refused to store it") }
    }

    /// The secret stored as `client`'s `kind` of `account`, or nil when the keyring holds none
    /// (or, locked, would not say).
    ///
    /// - Throws: `Failure` when the keyring could not be asked.
    public func lookup(client: String, account: String, kind: String) throws -> Secret? {
        let result = try call(Int32(CSECRET_LOOKUP), attributes(client: client, account: account, kind: kind))
        if let error = result.error { throw Failure(reason: error) }
        return result.secret.map(Secret.init)
    }

    /// Removes the secret stored as `client`'s `kind` of `account` (nothing there is no failure).
    ///
    /// - Throws: `Failure` when the keyring could not be asked.
    public func clear(client: String, account: String, kind: String) throws {
        let result = try call(Int32(CSECRET_CLEAR), attributes(client: client, account: account, kind: kind))
        if let error = result.error { throw Failure(reason: error) }
    }

    private func call(
        _ operation: Int32, _ attributes: [(String, String)], label: String? = nil, secret: String? = nil
    ) throws -> (ok: Bool, secret: String?, error: String?) {
        if let unreachable { throw Failure(reason: unreachable) }
        let names = attributes.map { strdup($0.0) }
        let values = attributes.map { strdup($0.1) }
        defer {
            for pointer in names + values { free(pointer) }
        }
        var namePointers = names.map { UnsafePointer<CChar>($0) }
        var valuePointers = values.map { UnsafePointer<CChar>($0) }
        let result = namePointers.withUnsafeMutableBufferPointer { namesBuffer in
            valuePointers.withUnsafeMutableBufferPointer { valuesBuffer in
                csecret_call(
                    operation, namesBuffer.baseAddress, valuesBuffer.baseAddress, Int32(attributes.count), label,
                    secret, timeout)
            }
        }
        defer {
            csecret_free(result.secret)
            csecret_free(result.error)
        }
        switch result.status {
        case 0:
            return (
                result.ok != 0, result.secret.map { String(cString: $0) },
                result.error.map { String(cString: $0) }
            )
        case 1:
            throw Failure(reason: "libsecret-1.so.0 is not installed (Debian: apt install libsecret-1-0)")
        case 2:
            throw Failure(
                reason: "the keyring did not answer within \(SecondsText.format(timeout)) s (APIMACRO_KEYRING_TIMEOUT)")
        default:
            throw Failure(reason: "no thread could be started to ask the keyring")
        }
    }
}
