import Foundation
import WebAPI

/// The URL shortener as apimacro knows it: one macro API over Bitly (the default), a
/// self-hosted Shlink, or Google's shut-down URL Shortener (legacy); its settings, where its
/// credential comes from and how `apimacro login shortener` gets one (`descriptor`).
///
/// `ShortenerBackend` holds what differs between the services, `ShortenerConfiguration`
/// reads the settings, the routers (`BitlyRouter`, `ShlinkRouter`, `GoogleShortenerRouter`)
/// build each request and `ShortenerClient` sends it.
public enum Shortener {
    /// The client's name.
    public static let name = "shortener"
    /// `APIMACRO_SHORTENER` (`[shortener] backend`): `bitly`, `shlink` or `google`.
    public static let backend = ClientSetting(key: "backend", variable: "APIMACRO_SHORTENER") { text in
        ShortenerBackend.named(text) == nil ? ShortenerBackend.problem(text) : nil
    }.described("the backend: bitly, shlink or google (legacy)", default: "bitly")
    /// `APIMACRO_SHORTENER_URL` (`[shortener] url`): the API's base URL (the backend's default
    /// when unset; Shlink has none).
    public static let url = ClientSetting.url(client: name, key: "url").described(
        "the API's base URL", default: "Bitly's https://api-ssl.bitly.com/v4; Shlink: none")
    /// `APIMACRO_SHORTENER_TOKEN` (`[shortener] token`): Bitly's access token, over the stored one.
    public static let token = ClientSetting(client: name, key: "token").described(
        "Bitly's access token (else the stored login)")
    /// `APIMACRO_SHORTENER_KEY` (`[shortener] key`): Shlink's (or Google's) API key, over the stored one.
    public static let key = ClientSetting(client: name, key: "key").described(
        "Shlink's or Google's API key (else the stored login)")
    /// `APIMACRO_SHORTENER_GROUP` (`[shortener] group`): the Bitly group links are made in and
    /// listed from (default: the account's default group).
    public static let group = ClientSetting(client: name, key: "group") { text in
        text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }
            ? nil : "'\(text)' is not a Bitly group GUID; accepted: letters, digits, '-' and '_', such as Ba1bc23dE4F"
    }.described("the Bitly group links are made in", default: "the account's default")
    /// `APIMACRO_SHORTENER_MAX_CONCURRENCY` (`[shortener] max_concurrency`): at most this many
    /// requests in flight at once (default 5 with Bitly, none otherwise).
    public static let maxConcurrency = ClientSetting(client: name, key: "max_concurrency") { text in
        Int(text.trimmingCharacters(in: .whitespaces)).map { $0 >= 1 } == true
            ? nil : "'\(text)' is not a count; accepted: a whole number of 1 or more (such as 5)"
    }.described("the most requests in flight at once", default: "5 with Bitly, else none")

    /// The shortener for `login`, `auth status`, `config.toml` and the setting checks: Bitly's
    /// token from `APIMACRO_SHORTENER_TOKEN`, Shlink's or Google's key from
    /// `APIMACRO_SHORTENER_KEY` (each only for its backend), else the one `apimacro login
    /// shortener` stored (pasted, as the backend's login prompt asks).
    public static let descriptor = ClientDescriptor(
        name: name, settings: [backend, url, token, key, group, maxConcurrency],
        credentialSources: [variable(token, for: [.bitly]), variable(key, for: [.shlink, .google]), .storedLogin],
        login: ShortenerBackend.bitly.login,
        loginIn: { view in (ShortenerBackend.selected(in: view) ?? .bitly).login },
        identity: { view in
            switch ShortenerBackend.selected(in: view) ?? .bitly {
            case .bitly: bitlyIdentity
            case .shlink: shlinkIdentity
            case .google: nil
            }
        })

    /// `auth status --check` with Bitly: `GET /user` names the account (its login).
    static let bitlyIdentity = IdentityCheck(BitlyRouter.user.request) { response in
        Identity(
            account: JSONPath.string(in: response.body, path: ["login"]) ?? JSONPath.string(
                in: response.body, path: ["name"])
                ?? "an account Bitly did not name")
    }

    /// `auth status --check` with Shlink, which names no account: one page of one short URL
    /// shows the key is accepted, and how many short URLs the server holds.
    static let shlinkIdentity = IdentityCheck(ShlinkRouter.list(page: 1, itemsPerPage: 1).request) { response in
        let total = JSONPath.string(in: response.body, path: ["shortUrls", "pagination", "totalItems"])
        return Identity(
            account: "the key is accepted (Shlink names no account)",
            facts: total.map { ["\($0) short URLs"] } ?? [])
    }

    /// `setting`'s variable as a credential source read only when the backend is one of `backends`.
    static func variable(_ setting: ClientSetting, for backends: Set<ShortenerBackend>) -> CredentialSource {
        CredentialSource(name: "env \(setting.variable)", variable: setting.variable) { view in
            guard let backend = ShortenerBackend.selected(in: view), backends.contains(backend) else { return nil }
            return view.value(setting).map(Secret.init)
        }
    }
}

extension Shortener {
    /// The shortener client the settings in `view` describe, on `context`.
    ///
    /// The backend they choose, its credential and cap on requests in flight: the one place a
    /// shortener client is made.
    public static func client(in view: SettingsView, on context: ClientContext) -> ShortenerClient {
        ShortenerClient(
            configuration: ShortenerConfiguration(view), transport: context.transport, log: context.log,
            redactor: context.redactor)
    }
}
