import Logging

/// A `-v` log handler that can be turned on and off while the process runs (the REPL's
/// `:verbose on|off`): below `info` while off, so swift-log drops the line without formatting it.
struct SwitchableLineHandler: LogHandler {
    let isOn: @Sendable () -> Bool
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level {
        get { isOn() ? .info : .critical }
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

extension ExchangeLog {
    /// A log that writes its `-v` lines to stderr while `isOn()` says so.
    ///
    /// With `full` (`-vv`), each request and response in full as well.
    public convenience init(printsWhile isOn: @escaping @Sendable () -> Bool, full: Bool = false) {
        self.init(logger: Logger(label: "apimacro.http") { _ in SwitchableLineHandler(isOn: isOn) }, full: full)
    }

    /// A log that only counts.
    public convenience init() {
        self.init(logger: nil)
    }
}
