import Clients
import Platform
public import PluginHost
import WebAPI

/// Credentials too short to be real tokens (a made-up `test` or `Octo`): apimacro redacts a
/// secret wherever it appears, so a short one turns ordinary output into `REDACTED-1` or
/// `The REDACTEDcat`.
///
/// `auth status` and the first request that reaches the network say so, once, naming the
/// variable (never the value).
public enum ShortSecrets {
    /// The length under which a credential is taken for a made-up one: 8 characters.
    public static let minimum = 8

    /// The warning lines for the credential variables of the built-in clients and of `plugins`
    /// set to fewer than `minimum` characters, in the order of the variables' names.
    public static func warnings(settings: Settings, plugins: [PluginManifest] = []) -> [String] {
        let descriptors = BuiltInClients.descriptors + plugins.map(\.descriptor)
        let variables = Set(descriptors.flatMap { $0.credentialSources.flatMap(\.variables) })
        return variables.sorted().compactMap { name in
            guard Settings.isSecretVariable(name), let value = settings.environment[name], !value.isEmpty,
                value.count < minimum
            else { return nil }
            let source = settings.configFileKeys[name].map { "config.toml's \($0) (\(name))" } ?? name
            let redaction =
                value.count >= Redactor.wholeWordBelow
                ? "it is still redacted (errors, -v lines, recordings, batch output), so text there that holds "
                    + "the same characters shows REDACTED"
                : "it is still redacted where it stands as a word of its own (errors, -v lines, recordings, "
                    + "batch output), so such words there show REDACTED"
            return "apimacro: warning: \(source) is \(value.count) character\(value.count == 1 ? "" : "s") long, too "
                + "short to be a real token (a real one is longer than \(minimum - 1)); \(redaction)"
        }
    }
}
