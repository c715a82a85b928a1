extension String {
    /// The text cut or filled with spaces to `length` UTF-16 units: Foundation's
    /// `padding(toLength: length, withPad: " ", startingAt: 0)`, which counts as `NSString` does
    /// (a surrogate pair cut in two leaves U+FFFD, as bridging the cut `NSString` did).
    public func padded(toLength length: Int) -> String {
        let units = utf16.count
        if units >= length {
            return units == length ? self : String(decoding: Array(utf16.prefix(length)), as: UTF16.self)
        }
        return self + String(repeating: " ", count: length - units)
    }
}
