import Synchronization

/// `-v` that can be turned on and off while the process runs (the REPL's `:verbose on|off`).
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
}
