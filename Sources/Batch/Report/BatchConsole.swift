import Platform
import WebAPI

/// What `apimacro batch` prints: a live progress line on a terminal, each
/// macro's output whole under a header as it ends, and the summary table.
///
/// When stdout's reader goes away (`apimacro batch ... | head`), the console says nothing more,
/// on either stream, and stops the batch (`BatchRunner.stopForClosedOutput`): it ends as
/// after SIGTERM, with status 141 (128 + SIGPIPE), as `gh` or `jq` would in that place.
public struct BatchConsole {
    /// Whether to print each macro's output (false with `--output-dir`).
    let printOutputs: Bool
    /// Whether stderr is a terminal (the progress line is drawn only then).
    let live: Bool
    private let out: (String) -> Void
    private let err: (String) -> Void

    /// A console writing to the process's stdout and stderr.
    ///
    /// It ignores SIGPIPE in this process (the children start with the default): a write to a
    /// closed pipe is then an error it handles, not the batch's death with its children
    /// running and its work folder left behind.
    public init(printOutputs: Bool) {
        self.printOutputs = printOutputs
        self.live = isatty(STDERR_FILENO) == 1
        signal(SIGPIPE, SIG_IGN)
        self.out = { text in
            guard !BatchRunner.outputClosed else { return }
            if !Self.write(text, to: STDOUT_FILENO) { BatchRunner.stopForClosedOutput() }
        }
        self.err = { text in
            guard !BatchRunner.outputClosed else { return }
            _ = Self.write(text, to: STDERR_FILENO)
        }
    }

    /// Writes all of `text` to `descriptor`; false when its reader has gone (EPIPE).
    ///
    /// Other errors (a full disk) drop the rest of the text, as before.
    static func write(_ text: String, to descriptor: Int32) -> Bool {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written > 0 {
                bytes = bytes.dropFirst(written)
            } else if written < 0, errno == EINTR {
                continue
            } else {
                return !(written < 0 && errno == EPIPE)
            }
        }
        return true
    }

    /// Handles one event of `BatchRunner.run`.
    public func show(_ event: BatchRunner.Event) {
        switch event {
        case .progress(let done, let running, let failed, let seconds):
            guard live else { return }
            err(
                "\r\u{1B}[Kbatch: \(done) done, \(running) running, \(failed) failed, \(PrintfText.format("%.1f", seconds)) s"
            )
        case .finished(let result):
            clearProgress()
            for warning in result.warnings { err("apimacro: \(result.name): \(warning)\n") }
            guard printOutputs, result.status != .notRun else { return }
            let header =
                "==> \(result.name): \(result.status.label)\(result.exitCode.map { ", exit \($0)" } ?? "") <==\n"
            if !result.stdout.isEmpty { out(header + terminated(result.stdout)) }
            if !result.stderr.isEmpty { err(header + terminated(result.stderr)) }
        }
    }

    /// Erases the progress line.
    public func clearProgress() {
        if live { err("\r\u{1B}[K") }
    }

    /// Prints the summary table.
    public func summarize(_ results: [BatchResult], seconds: Double) {
        clearProgress()
        out(Self.summary(results, seconds: seconds))
    }

    /// The summary: one row per macro (name, status, exit code, seconds,
    /// requests, cache hits; "-" where unknown), then a line of totals.
    public static func summary(_ results: [BatchResult], seconds: Double) -> String {
        let header = ["MACRO", "STATUS", "EXIT", "SECONDS", "REQUESTS", "CACHE HITS"]
        let rows = results.map { result in
            [
                result.name, result.status.label, result.exitCode.map(String.init) ?? "-",
                result.status == .notRun ? "-" : PrintfText.format("%.2f", result.seconds),
                result.stats.map { String($0.requests) } ?? "-", result.stats.map { String($0.cacheHits) } ?? "-",
            ]
        }
        let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        func line(_ cells: [String]) -> String {
            cells.indices.map { column in
                let cell = cells[column]
                let pad = String(repeating: " ", count: widths[column] - cell.count)
                return column < 2 ? cell + pad : pad + cell
            }.joined(separator: "  ").trimmingWhitespace() + "\n"
        }
        var text = ([header] + rows).map(line).joined()
        var labels = ["ok"]
        for result in results where !labels.contains(result.status.label) { labels.append(result.status.label) }
        let tally = labels.map { label in "\(results.filter { $0.status.label == label }.count) \(label)" }
            .joined(separator: ", ")
        text +=
            "\(results.count) macro\(results.count == 1 ? "" : "s"): \(tally) in \(PrintfText.format("%.1f", seconds)) s\n"
        return text
    }

    private func terminated(_ text: String) -> String {
        text.hasSuffix("\n") ? text : text + "\n"
    }
}
