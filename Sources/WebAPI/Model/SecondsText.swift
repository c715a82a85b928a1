import Platform

/// A number of seconds as messages show it: `120`, `0.5`, `0.25` (at most three decimals).
public enum SecondsText {
    /// `value` as text: a whole number without decimals, otherwise rounded to the millisecond
    /// with trailing zeros dropped; a value too large (or not finite) for that, as Swift prints it.
    public static func format(_ value: Double) -> String {
        guard value.isFinite, abs(value) < 1e15 else { return String(value) }
        if value == value.rounded() { return String(Int(value)) }
        var text = PrintfText.format("%.3f", value)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }
}
