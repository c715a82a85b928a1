import Platform

/// One setting of a client: its key in the client's `config.toml` table, the environment
/// variable that key stands for (`[github] url` is `APIMACRO_GITHUB_URL`), and what a value
/// must be.
///
/// A client declares every `APIMACRO_<NAME>_*` variable it reads as one of these (in its
/// `ClientDescriptor`), and reads it through `SettingsView.value(_:)`: so each has its
/// `config.toml` key, and each bad value is refused at start with the variable's name.
public struct ClientSetting: Sendable {
    /// The key in the client's `config.toml` table (`url`, `api_version`).
    public let key: String
    /// `APIMACRO_<CLIENT>_<KEY>` in capitals.
    public let variable: String
    /// Why a value is refused (`'x' is not …; accepted: …`), or nil when it is accepted; nil
    /// when any text is.
    public let problem: (@Sendable (String) -> String?)?
    /// Whether its value is no secret although its name ends like one's (`APIMACRO_GITHUB_APP_KEY`
    /// holds the path of a key file, which messages should name).
    public let holdsNoSecret: Bool
    /// What it sets, in a few words, for `apimacro help environment` and the man page's
    /// ENVIRONMENT (empty: not described yet).
    public private(set) var summary = ""
    /// Its value when unset, as those lists show it (nil: none).
    public private(set) var defaultText: String?

    /// The setting `key` of the client called `client`; `problem` checks a value.
    public init(
        client: String, key: String, holdsNoSecret: Bool = false, problem: (@Sendable (String) -> String?)? = nil
    ) {
        self.key = key
        variable = ("APIMACRO_" + client + "_" + key).uppercased()
        self.holdsNoSecret = holdsNoSecret
        self.problem = problem
    }

    /// The setting `key` that stands for `variable`, a name other than `APIMACRO_<CLIENT>_<KEY>`
    /// (`[shortener] backend` is `APIMACRO_SHORTENER`); `problem` checks a value.
    public init(key: String, variable: String, problem: (@Sendable (String) -> String?)? = nil) {
        self.key = key
        self.variable = variable
        self.holdsNoSecret = false
        self.problem = problem
    }

    /// This setting with what it sets and its default, as `apimacro help environment` shows them.
    public func described(_ summary: String, default defaultText: String? = nil) -> ClientSetting {
        var setting = self
        setting.summary = summary
        setting.defaultText = defaultText
        return setting
    }

    /// A setting whose value is an http:// or https:// URL (see `urlProblem`).
    public static func url(client: String, key: String) -> ClientSetting {
        ClientSetting(client: client, key: key, problem: urlProblem)
    }

    /// Why `text` is not an absolute http(s) URL with a host, or nil when it is one: the rule of
    /// every client's URL setting, plugins' `APIMACRO_<NAME>_URL` included.
    @Sendable public static func urlProblem(_ text: String) -> String? {
        guard let url = URL(string: text), ["http", "https"].contains(url.scheme?.lowercased() ?? ""),
            url.host?.isEmpty == false
        else {
            return "'\(text)' is not an http:// or https:// URL; accepted: a URL such as https://api.example.com/v1"
        }
        return nil
    }
}
