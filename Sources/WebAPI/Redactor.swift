import Foundation

/// Replaces known secret values by `REDACTED` in text bound for the user.
public struct Redactor: Sendable {
    /// The secrets, longest first so a secret that contains another is caught whole.
    public let secrets: [String]

    public init(secrets: [String]) {
        self.secrets = Array(Set(secrets.filter { !$0.isEmpty })).sorted { $0.count > $1.count }
    }

    /// `text` with every secret replaced.
    public func redact(_ text: String) -> String {
        secrets.reduce(text) { $0.replacingOccurrences(of: $1, with: "REDACTED") }
    }
}
