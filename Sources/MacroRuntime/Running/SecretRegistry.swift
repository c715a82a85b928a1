import Clients
import Synchronization
import WebAPI

/// The secrets of this process, for what apimacro prints itself (tracebacks, the REPL's
/// echo): those known at start (credential variables, plugin keys) and those a macro hands
/// to a credential slot later, such as the password of `apimacro.request(auth=(user, password))`,
/// which may then appear in a traceback's source line.
final class SecretRegistry: Sendable {
    private let current: Mutex<Redactor>

    init(_ redactor: Redactor) {
        current = Mutex(redactor)
    }

    /// The redactor now.
    var redactor: Redactor { current.withLock { $0 } }

    /// Redacts `secret` from now on (values under 4 characters are too common to redact).
    func add(_ secret: String) {
        current.withLock { redactor in
            if secret.count >= 4, !redactor.secrets.contains(secret) { redactor = redactor.adding([secret]) }
        }
    }
}
