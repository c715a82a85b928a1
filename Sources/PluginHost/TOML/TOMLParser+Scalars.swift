/// Numbers, dates and times: the shapes of tomllib's `RE_NUMBER`, `RE_DATETIME` and
/// `RE_LOCALTIME`, matched by hand at the current position.
extension TOMLParser {
    // MARK: numbers

    /// An integer (decimal, `0x`, `0o`, `0b`, with `_` between digits) or a float, or nil when
    /// no number starts here.
    mutating func number() throws -> TOMLValue? {
        let start = position
        if at() == "0", let prefix = at(1), let radix = Self.radixes[prefix], let first = at(2),
            Self.digit(first, radix: radix)
        {
            let end = digitRun(from: position + 3) { Self.digit($0, radix: radix) }
            let digits = Self.withoutUnderscores(start + 2, end, in: text)
            guard let value = Int(digits, radix: radix) else {
                throw failure("the integer does not fit in 64 bits (-9223372036854775808 to 9223372036854775807)")
            }
            position = end
            return .integer(value)
        }
        var index = start
        if at() == "+" || at() == "-" { index += 1 }
        guard let first = scalar(index), Self.decimal(first) else { return nil }
        index = first == "0" ? index + 1 : digitRun(from: index + 1, Self.decimal)
        var isFloat = false
        if scalar(index) == ".", let next = scalar(index + 1), Self.decimal(next) {
            index = digitRun(from: index + 2, Self.decimal)
            isFloat = true
        }
        if let e = scalar(index), e == "e" || e == "E" {
            var exponent = index + 1
            if scalar(exponent) == "+" || scalar(exponent) == "-" { exponent += 1 }
            if let next = scalar(exponent), Self.decimal(next) {
                index = digitRun(from: exponent + 1, Self.decimal)
                isFloat = true
            }
        }
        let literal = Self.withoutUnderscores(start, index, in: text)
        if isFloat {
            // Every shape matched here is one `Double(_:)` reads (a huge exponent gives infinity, as in Python).
            guard let value = Double(literal) else { throw failure("the float cannot be read") }
            position = index
            return .double(value)
        }
        guard let value = Int(literal) else {
            throw failure("the integer does not fit in 64 bits (-9223372036854775808 to 9223372036854775807)")
        }
        position = index
        return .integer(value)
    }

    private static let radixes: [Unicode.Scalar: Int] = ["x": 16, "o": 8, "b": 2]

    /// The end of `(_?DIGIT)*` from `index`: a `_` counts only between two digits.
    private func digitRun(from index: Int, _ isDigit: (Unicode.Scalar) -> Bool) -> Int {
        var index = index
        while let character = scalar(index) {
            if character == "_", let next = scalar(index + 1), isDigit(next) {
                index += 2
            } else if isDigit(character) {
                index += 1
            } else {
                break
            }
        }
        return index
    }

    private static func digit(_ character: Unicode.Scalar, radix: Int) -> Bool {
        switch radix {
        case 16: decimal(character) || ("a"..."f").contains(character) || ("A"..."F").contains(character)
        case 8: ("0"..."7").contains(character)
        default: character == "0" || character == "1"
        }
    }

    private static func decimal(_ character: Unicode.Scalar) -> Bool { ("0"..."9").contains(character) }

    private static func withoutUnderscores(_ start: Int, _ end: Int, in text: [Unicode.Scalar]) -> String {
        String(String.UnicodeScalarView(text[start..<end].filter { $0 != "_" }))
    }

    /// The scalar at `index` (absolute); nil past the end.
    private func scalar(_ index: Int) -> Unicode.Scalar? { index < text.count ? text[index] : nil }

    // MARK: dates and times

    /// A date, or a date and time with or without an offset (`1979-05-27`, `1979-05-27T07:32:00Z`,
    /// `1979-05-27 07:32:00.999999-07:00`) as `isoformat()` text, or nil when none starts here.
    ///
    /// A date that does not exist (`2023-02-29`, year 0) is an error, as in tomllib.
    mutating func dateTime() throws -> String? {
        guard let year = number(at: 0, digits: 4), at(4) == "-", let month = number(at: 5, digits: 2),
            (1...12).contains(month), at(7) == "-", let day = number(at: 8, digits: 2), (1...31).contains(day)
        else { return nil }
        var length = 10
        var written = Self.two(year / 100) + Self.two(year % 100) + "-" + Self.two(month) + "-" + Self.two(day)
        if let separator = at(10), separator == "T" || separator == "t" || separator == " ",
            let time = time(at: 11)
        {
            length = 11 + time.length
            written += "T" + time.text
            if let zone = at(length), zone == "Z" || zone == "z" {
                length += 1
                written += "+00:00"
            } else if let sign = at(length), sign == "+" || sign == "-", let hours = number(at: length + 1, digits: 2),
                hours < 24, at(length + 3) == ":", let minutes = number(at: length + 4, digits: 2), minutes < 60
            {
                length += 6
                written += (hours == 0 && minutes == 0 ? "+" : String(sign)) + Self.two(hours) + ":" + Self.two(minutes)
            }
        }
        guard year >= 1, day <= Self.days(in: month, of: year) else {
            throw failure("there is no such date (a month has 28 to 31 days, and years start at 0001)")
        }
        position += length
        return written
    }

    /// A time of day (`07:32:00`, `00:32:00.999999`) as `isoformat()` text, or nil when none starts here.
    mutating func localTime() -> String? {
        guard let time = time(at: 0) else { return nil }
        position += time.length
        return time.text
    }

    /// `HH:MM:SS` with an optional fraction, `offset` scalars ahead; the fraction keeps
    /// microseconds (more digits are read and dropped, as Python's `datetime` keeps no more).
    private func time(at offset: Int) -> (text: String, length: Int)? {
        guard let hour = number(at: offset, digits: 2), hour < 24, at(offset + 2) == ":",
            let minute = number(at: offset + 3, digits: 2), minute < 60, at(offset + 5) == ":",
            let second = number(at: offset + 6, digits: 2), second < 60
        else { return nil }
        var length = 8
        var written = Self.two(hour) + ":" + Self.two(minute) + ":" + Self.two(second)
        if at(offset + 8) == ".", let first = at(offset + 9), Self.decimal(first) {
            length = 9
            var micros = ""
            while let digit = at(offset + length), Self.decimal(digit) {
                if micros.count < 6 { micros.unicodeScalars.append(digit) }
                length += 1
            }
            micros += String(repeating: "0", count: 6 - micros.count)
            if micros != "000000" { written += "." + micros }
        }
        return (written, length)
    }

    /// The number written with exactly `digits` ASCII digits `offset` scalars ahead.
    private func number(at offset: Int, digits: Int) -> Int? {
        var value = 0
        for index in 0..<digits {
            guard let character = at(offset + index), Self.decimal(character) else { return nil }
            value = value * 10 + Int(character.value - 0x30)
        }
        return value
    }

    private static func two(_ value: Int) -> String { value < 10 ? "0\(value)" : String(value) }

    private static func days(in month: Int, of year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}
