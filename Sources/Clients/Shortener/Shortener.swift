/// The URL shortener (Google URL Shortener v1) as apimacro knows it: its settings, where
/// its key comes from and how `apimacro login shortener` gets one (`descriptor`);
/// `ShortenerConfiguration` reads them, `ShortenerRouter` builds each request and
/// `ShortenerClient` sends it.
public enum Shortener {
    /// The client's name.
    public static let name = "shortener"
    /// `APIMACRO_SHORTENER_URL` (`[shortener] url`): the API's base URL.
    public static let url = ClientSetting.url(client: name, key: "url")
    /// `APIMACRO_SHORTENER_KEY` (`[shortener] key`): the API key, over the stored one.
    public static let key = ClientSetting(client: name, key: "key")

    /// The shortener for `login`, `auth status`, `config.toml` and the setting checks: the key
    /// from `APIMACRO_SHORTENER_KEY`, else the one `apimacro login shortener` stored (pasted).
    public static let descriptor = ClientDescriptor(
        name: name, settings: [url, key], credentialSources: [.variable(key.variable), .storedLogin],
        login: .pastedKey(label: "your Google API key", variable: key.variable))
}
