/// The colours apimacro paints its own lines with (SGR escapes), or none.
///
/// Errors are red with `apimacro:` in bold, warnings yellow, a traceback's last line (the
/// exception) bold red; the same text with no escapes when `enabled` is false.
public struct Palette: Sendable, Equatable {
    /// Whether anything is painted.
    public let enabled: Bool

    /// A palette that paints (`enabled`) or leaves text as it is.
    public init(enabled: Bool) {
        self.enabled = enabled
    }

    /// `text` in the SGR style `code` (`"1;31"`), reset after it.
    func paint(_ text: String, _ code: String) -> String {
        guard enabled, !text.isEmpty else { return text }
        return "\u{1B}[\(code)m\(text)\u{1B}[0m"
    }

    /// A good outcome (`auth status --check`'s ✓): green.
    public func good(_ text: String) -> String {
        paint(text, "32")
    }

    /// A bad outcome that is not an error line (`auth status --check`'s ✗): red.
    public func bad(_ text: String) -> String {
        paint(text, "31")
    }

    /// An error line (`apimacro: …`): red, its `apimacro:` bold.
    public func error(_ message: String) -> String {
        lines(message, prefixStyle: "1;31", style: "31")
    }

    /// A warning line (`apimacro: warning: …`): yellow, its `apimacro:` (and `warning:`) bold.
    public func warning(_ message: String) -> String {
        lines(message, prefixStyle: "1;33", style: "33")
    }

    /// A Python traceback: its last line, the exception and its message, bold red.
    public func traceback(_ text: String) -> String {
        guard enabled else { return text }
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let last = lines.lastIndex(where: { !$0.isEmpty && !$0.hasPrefix(" ") }) else { return text }
        lines[last] = paint(lines[last], "1;31")
        return lines.joined(separator: "\n")
    }

    /// Each line of `message` in `style`, its `apimacro:` prefix (with `warning:`) in `prefixStyle`.
    private func lines(_ message: String, prefixStyle: String, style: String) -> String {
        guard enabled else { return message }
        return message.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            for prefix in ["apimacro: warning: ", "apimacro: "] where line.hasPrefix(prefix) {
                return paint(String(prefix.dropLast()), prefixStyle) + " "
                    + paint(String(line.dropFirst(prefix.count)), style)
            }
            return paint(String(line), style)
        }.joined(separator: "\n")
    }
}
