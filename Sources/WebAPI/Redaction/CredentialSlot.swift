import Synchronization

/// A client's credential, which a login may set while the client is in use,
/// and the redactor that knows it (rebuilt only when the credential changes,
/// not on every request).
public final class CredentialSlot: Sendable {
    private let stored: Mutex<(credential: Credential?, base: Redactor, redactor: Redactor)>
    /// Where the credential comes from when it is fetched or renewed per request; nil when
    /// it is only what was set.
    public let provider: (any CredentialProvider)?

    /// - Parameters:
    ///   - credential: the credential to start with, or nil for none yet.
    ///   - base: what to redact besides the credential itself.
    ///   - provider: asked before each request (`resolve(for:)`), if any.
    public init(
        _ credential: Credential?, redactor base: Redactor = Redactor(secrets: []),
        provider: (any CredentialProvider)? = nil
    ) {
        stored = Mutex((credential, base, CredentialSlot.redactor(base, credential)))
        self.provider = provider
    }

    /// Asks the provider, if any, for the credential of a request to `url` and keeps it; the
    /// one it replaces stays redacted.
    ///
    /// - Throws: what the provider throws.
    public nonisolated(nonsending) func resolve(for url: String) async throws {
        guard let provider else { return }
        adopt(try await provider.credential(for: url))
    }

    /// `resolve(for:)` when the provider knows the credential without waiting
    /// (`CredentialProvider.knownCredential(for:)`); false when it does not (nothing was done).
    public func resolveAtOnce(for url: String) -> Bool {
        guard let provider else { return true }
        guard let known = provider.knownCredential(for: url) else { return false }
        adopt(known)
        return true
    }

    private func adopt(_ credential: Credential?) {
        stored.withLock { state in
            guard state.credential?.wireForms != credential?.wireForms else { return }
            if let old = state.credential {
                let forms = old.wireForms.filter { $0.count >= 4 && !state.base.secrets.contains($0) }
                if !forms.isEmpty { state.base = state.base.adding(forms) }
            }
            state.credential = credential
            state.redactor = CredentialSlot.redactor(state.base, credential)
        }
    }

    private static func redactor(_ base: Redactor, _ credential: Credential?) -> Redactor {
        credential.map { base.adding($0.wireForms) } ?? base
    }

    /// Redacts `secrets` too from now on, whatever the credential: the forms of a per-request
    /// credential (`auth=(user, password)`), which may come back in a body that echoes it.
    public func remember(_ secrets: [String]) {
        stored.withLock { state in
            let new = secrets.filter { $0.count >= 4 && !state.base.secrets.contains($0) }
            guard !new.isEmpty else { return }
            state.base = state.base.adding(new)
            state.redactor = CredentialSlot.redactor(state.base, state.credential)
        }
    }

    /// The credential now.
    public var value: Credential? { stored.withLock { $0.credential } }

    /// Redacts the base secrets and the current credential.
    public var redactor: Redactor { stored.withLock { $0.redactor } }

    /// Replaces the credential.
    public func set(_ credential: Credential?) {
        stored.withLock { state in
            state.credential = credential
            state.redactor = CredentialSlot.redactor(state.base, credential)
        }
    }
}
