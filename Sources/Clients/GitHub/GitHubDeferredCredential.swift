import Platform
import Spawning
import Synchronization
public import WebAPI

/// The GitHub token read when the first request needs it, from the sources that cost
/// something to read (`gh`'s `hosts.yml`, then `gh auth token`): a macro that never calls
/// GitHub never runs `gh`.
///
/// It is read once per run, on a thread of its own (running `gh` blocks for up to
/// `GitHubCLI.commandTimeout`); a problem (a file apimacro will not read, a `gh` that did not
/// answer) is one warning, and the requests go without a token.
public final class GitHubDeferredCredential: CredentialProvider {
    private let view: SettingsView
    private let sources: [CredentialSource]
    private let warn: @Sendable (String) -> Void
    private let learned: @Sendable (String) -> Void
    private let flight = SingleFlight<Credential?>()
    private let found = Mutex<(done: Bool, credential: Credential?, source: String?)>((false, nil, nil))

    /// - Parameters:
    ///   - view: the settings the sources read.
    ///   - sources: the sources, in the order they win.
    ///   - warn: prints one line on stderr.
    ///   - learned: told the token found, so everything apimacro prints redacts it.
    public init(
        view: SettingsView, sources: [CredentialSource], warn: @escaping @Sendable (String) -> Void,
        learned: @escaping @Sendable (String) -> Void
    ) {
        self.view = view
        self.sources = sources
        self.warn = warn
        self.learned = learned
    }

    /// Where the token came from (`gh: hosts.yml`), once read; nil before, or when none was found.
    public var source: String? { found.withLock { $0.source } }

    /// The credential once looked up (once per process), else nil: it has to be looked up.
    public func knownCredential(for url: String) -> Credential?? {
        found.withLock { $0.done ? Optional($0.credential) : nil }
    }

    public func credential(for url: String) async throws -> Credential? {
        if let known = found.withLock({ $0.done ? Optional($0.credential) : nil }) { return known }
        return try await flight.run { [self] in
            if let known = found.withLock({ $0.done ? Optional($0.credential) : nil }) { return known }
            let (view, sources) = (self.view, self.sources)
            // On a thread of its own (`gh` may block), so no thread of Swift's pool waits.
            let lookup = try await Blocking.run {
                ClientDescriptor(name: GitHub.name, credentialSources: sources).lookUp(in: view)
            }
            for problem in lookup.problems { warn("apimacro: warning: \(problem)") }
            let credential = lookup.found.map { Credential.bearer($0.secret) }
            if let secret = lookup.found?.secret { learned(secret.revealed) }
            found.withLock { $0 = (true, credential, lookup.found?.source.name) }
            return credential
        }
    }
}
