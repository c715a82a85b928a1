import Clients
import Synchronization
import WebAPI

/// The secrets of this process, for what apimacro prints itself (tracebacks, the REPL's
/// echo): those known at start (credential variables, plugin keys) and those a macro hands
/// to a credential slot later, such as the password of `apimacro.request(auth=(user, password))`,
/// which may then appear in a traceback's source line.
///
/// In a `batch` child it also tells the parent every secret it knows that the parent does not
/// (`journal`), as it learns it, so that the parent redacts the child's output of it.
final class SecretRegistry: Sendable {
    private let current: Mutex<Redactor>
    /// Where each secret added goes for the `batch` parent, if anywhere.
    private let journal: LearnedSecrets?

    /// A registry knowing `redactor`'s secrets; with `journal`, those of them not in
    /// `parentKnows` are written to it at once, and every secret added later.
    init(_ redactor: Redactor, journal: LearnedSecrets? = nil, parentKnows: [String] = []) {
        current = Mutex(redactor)
        self.journal = journal
        let known = Set(parentKnows)
        journal?.append(redactor.secrets.filter { !known.contains($0) })
    }

    /// The redactor now.
    var redactor: Redactor { current.withLock { $0 } }

    /// Redacts `secret` from now on (values under 4 characters are too common to redact).
    func add(_ secret: String) {
        current.withLock { redactor in
            guard secret.count >= 4, !redactor.secrets.contains(secret) else { return }
            redactor = redactor.adding([secret])
            journal?.append([secret])
        }
    }
}
