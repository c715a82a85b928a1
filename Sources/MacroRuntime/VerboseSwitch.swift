import Clients
import Foundation
import Logging
import Synchronization

/// `-v` that can be turned on and off while the process runs (the REPL's
/// `:verbose on|off`): a log handler that prints the `-v` lines only while on.
final class VerboseSwitch: Sendable {
    private let state: Atomic<Bool>

    init(on: Bool) {
        state = Atomic(on)
    }

    /// Whether `-v` lines are printed now.
    var isOn: Bool {
        get { state.load(ordering: .relaxed) }
        set { state.store(newValue, ordering: .relaxed) }
    }

    /// A logger whose lines reach stderr only while the switch is on.
    func logger() -> Logger {
        Logger(label: "apimacro.http") { [self] _ in SwitchedHandler(owner: self) }
    }

    /// Below `info` while off, so swift-log drops the line without calling `log`.
    private struct SwitchedHandler: LogHandler {
        let owner: VerboseSwitch
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level {
            get { owner.isOn ? .info : .critical }
            set {}
        }

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            StderrLineHandler().log(event: event)
        }
    }
}
