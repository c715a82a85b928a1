import Platform
import Synchronization

/// A line on stderr that says how a long job is going (pages, items, requests, the rate-limit
/// budget left), redrawn in place and erased before anything else is printed.
///
/// Only where a person watches: stdout and stderr both terminals, `TERM` not `dumb`, no `-v`
/// (whose lines are the progress then). A job shows it only once it has run for
/// `ProgressLine.delay`, so a short one never flickers; redraws are at most every 100 ms.
public final class ProgressLine: Sendable {
    private struct State {
        var started: ContinuousClock.Instant?
        var lastDraw: ContinuousClock.Instant?
        var shown = false
    }

    private let state = Mutex(State())
    /// Draws the line (cut to the width) in place of the last one.
    private let show: @Sendable (String) -> Void
    /// Takes the line away.
    private let clear: @Sendable () -> Void
    private let width: @Sendable () -> Int
    private let now: @Sendable () -> ContinuousClock.Instant
    /// How long a job runs before its line appears.
    let delay: Duration

    /// A line written by `write` (stderr's descriptor in use), cut to `width()` cells, timed by
    /// `now` (tests pass their own clock).
    init(
        delay: Duration = .milliseconds(500), width: @escaping @Sendable () -> Int = ProgressLine.terminalWidth,
        now: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now },
        write: @escaping @Sendable (String) -> Void = ProgressLine.standardError
    ) {
        self.delay = delay
        self.width = width
        self.now = now
        self.show = { line in write("\r\u{1B}[2m\(line)\u{1B}[0m\u{1B}[K") }
        self.clear = { write("\r\u{1B}[K") }
    }

    /// A line drawn by `show` and taken away by `clear` rather than on a terminal: a notebook's
    /// display that `import apimacro` updates in place (`ExtensionModule`).
    public init(
        delay: Duration = .milliseconds(500), width: Int = 100, show: @escaping @Sendable (String) -> Void,
        clear: @escaping @Sendable () -> Void
    ) {
        self.delay = delay
        self.width = { width }
        self.now = { ContinuousClock.now }
        self.show = show
        self.clear = clear
    }

    /// The progress line for a command with `settings`, or nil where nobody watches it.
    public static func forTerminal(_ settings: Settings) -> ProgressLine? {
        guard isatty(STDOUT_FILENO) == 1, isatty(STDERR_FILENO) == 1, !settings.verbose,
            settings.environment["TERM"] != "dumb"
        else { return nil }
        return ProgressLine()
    }

    /// Starts timing a job (its first update counts from here).
    public func begin() {
        let started = now()
        state.withLock { $0.started = started }
    }

    /// Shows `text` when the job has run long enough and the last redraw is 100 ms old.
    public func update(_ text: @autoclosure () -> String) {
        let now = self.now()
        let due = state.withLock { state -> Bool in
            let started = state.started ?? now
            if state.started == nil { state.started = now }
            guard now - started >= delay else { return false }
            if let last = state.lastDraw, now - last < .milliseconds(100) { return false }
            state.lastDraw = now
            state.shown = true
            return true
        }
        guard due else { return }
        let limit = max(10, width() - 1)
        var line = text()
        if line.count > limit { line = String(line.prefix(limit - 1)) + "…" }
        show(line)
    }

    /// Erases the line if it is shown (before any other output) and ends the job.
    public func erase() {
        let shown = state.withLock { state -> Bool in
            defer { state = State() }
            return state.shown
        }
        if shown { clear() }
    }

    /// Whether the line is on the screen now.
    var isShown: Bool { state.withLock { $0.shown } }

    /// Writes `text` to stderr unbuffered.
    public static let standardError: @Sendable (String) -> Void = { text in
        StandardStreams.error(text)
    }

    /// The terminal's width: `COLUMNS` when it holds a number, else stderr's terminal's, else 80.
    public static let terminalWidth: @Sendable () -> Int = {
        if let columns = ProcessInfo.processInfo.environment["COLUMNS"].flatMap({ Int($0) }), columns > 0 {
            return columns
        }
        var size = winsize()
        if ioctl(STDERR_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        return 80
    }

    /// "1,234".
    static func count(_ number: Int) -> String {
        let digits = Array(String(number.magnitude))
        var grouped = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { grouped.append(",") }
            grouped.append(digit)
        }
        return (number < 0 ? "-" : "") + grouped
    }

    /// The line of a paginated list: "github: 3 pages · 250 items · 4 requests · rate limit 4,987 left".
    static func pagesText(
        client: String, pages: Int, items: Int?, requests: Int, remaining: Int?
    ) -> String {
        var parts = ["\(client): \(count(pages)) \(pages == 1 ? "page" : "pages")"]
        if let items { parts.append("\(count(items)) \(items == 1 ? "item" : "items")") }
        parts.append("\(count(requests)) \(requests == 1 ? "request" : "requests")")
        if let remaining { parts.append("rate limit \(count(remaining)) left") }
        return parts.joined(separator: " · ")
    }
}
