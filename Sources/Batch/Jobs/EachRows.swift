import Platform
import WebAPI

/// `apimacro batch --each rows.csv MACRO`: the macro once per row of a CSV file (RFC 4180: a
/// header row, fields separated by commas, `"..."` quoting with `""` for a quote), each column
/// passed by name to the `main()` parameter of that name.
///
/// Every row is read and checked before anything runs: a file that is not CSV, a column no
/// parameter takes, or a required parameter no column gives is a `BatchError` naming it.
public struct EachRows {
    /// How the file is named in messages.
    public let label: String
    /// The header.
    public let columns: [String]
    /// The rows, each with one field per column, and the line each starts on.
    public let rows: [(line: Int, fields: [String])]

    /// Reads and parses `path`.
    public static func read(_ path: String) throws -> EachRows {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw BatchError("--each: cannot read \(path): \(ReportFile.reason(error))")
        }
        guard let text = String(data: data, encoding: .utf8), !data.contains(0) else {
            throw BatchError("--each \(path) is not CSV: it is not UTF-8 text")
        }
        return try parse(text, label: path)
    }

    /// Parses CSV `text` (a header, then rows of as many fields).
    public static func parse(_ text: String, label: String) throws -> EachRows {
        var records: [(line: Int, fields: [String])] = []
        var fields: [String] = []
        var field = ""
        var line = 1
        var recordLine = 1
        var quoted = false
        var characters = Array(text.hasPrefix("\u{FEFF}") ? String(text.dropFirst()) : text)[...]
        var fieldStarted = false
        func endRecord() {
            fields.append(field)
            if !(fields.count == 1 && fields[0].isEmpty && !fieldStarted) { records.append((recordLine, fields)) }
            fields = []
            field = ""
            fieldStarted = false
        }
        while let character = characters.popFirst() {
            if quoted {
                if character == "\"" {
                    if characters.first == "\"" {
                        field.append("\"")
                        characters = characters.dropFirst()
                    } else {
                        quoted = false
                    }
                } else {
                    if character == "\n" || character == "\r\n" { line += 1 }
                    field.append(character)
                }
                continue
            }
            switch character {
            case "\"":
                guard field.isEmpty else {
                    throw BatchError(
                        "--each \(label):\(line) is not CSV: a quote inside an unquoted field; quote the field "
                            + "and double the quote (\"say \"\"hi\"\"\")")
                }
                quoted = true
                fieldStarted = true
            case ",":
                fields.append(field)
                field = ""
                fieldStarted = true
            case "\n", "\r\n", "\r":
                endRecord()
                line += 1
                recordLine = line
            default:
                field.append(character)
                fieldStarted = true
            }
        }
        if quoted { throw BatchError("--each \(label):\(recordLine) is not CSV: a quoted field is never closed") }
        if fieldStarted || !field.isEmpty || !fields.isEmpty { endRecord() }
        guard let header = records.first else {
            throw BatchError(
                "--each \(label) is empty; write a header row naming main()'s parameters, then one row per run")
        }
        let columns = header.fields.map { $0.trimmingWhitespace() }
        if let blank = columns.firstIndex(where: \.isEmpty) {
            throw BatchError(
                "--each \(label):1: column \(blank + 1) has no name; the header row names main()'s parameters")
        }
        var seen = Set<String>()
        for column in columns where !seen.insert(column).inserted {
            throw BatchError("--each \(label):1: the column '\(column)' is named twice")
        }
        let rows = Array(records.dropFirst())
        for row in rows where row.fields.count != columns.count {
            throw BatchError(
                "--each \(label):\(row.line) is not CSV as its header says: \(row.fields.count) "
                    + "field\(row.fields.count == 1 ? "" : "s"), the header has \(columns.count)")
        }
        guard !rows.isEmpty else { throw BatchError("--each \(label) has a header but no rows: nothing to run") }
        return EachRows(label: label, columns: columns, rows: rows)
    }

    /// A parameter of `main()`, as `MacroSignature.Parameter` gives it.
    public struct Parameter: Sendable {
        public var name: String
        /// "positional", the option's flag (`--user-name`), "*" or "**".
        public var passing: String
        public var required: Bool
        /// "false", "true" or "none" for a bool flag (`MacroSignature.Parameter.flag`), else "".
        public var flag: String

        public init(name: String, passing: String, required: Bool, flag: String) {
            self.name = name
            self.passing = passing
            self.required = required
            self.flag = flag
        }
    }

    /// One job per row of `macro`, whose `main()` takes `parameters`, named `BASE.rowN`.
    ///
    /// - Throws: `BatchError` naming a column no parameter takes, or a required parameter no column gives.
    public func jobs(macro: String, parameters: [Parameter], taken: [BatchJob]) throws -> [BatchJob] {
        let byName = Dictionary(parameters.map { ($0.name, $0) }) { first, _ in first }
        let signature = parameters.map(\.name).joined(separator: ", ")
        for column in columns where ["*", "**", nil].contains(byName[column]?.passing) {
            throw BatchError(
                "--each \(label): the column '\(column)' is no parameter of \(macro)'s main(\(signature)); "
                    + "name each column after a parameter")
        }
        for parameter in parameters where parameter.required && !columns.contains(parameter.name) {
            throw BatchError(
                "--each \(label) has no column '\(parameter.name)', which \(macro)'s main() needs; "
                    + "add it to the header row")
        }
        let positionals = parameters.filter { $0.passing == "positional" }
        if let gap = positionals.firstIndex(where: { !columns.contains($0.name) }),
            let later = positionals[gap...].first(where: { columns.contains($0.name) })
        {
            throw BatchError(
                "--each \(label): the column '\(later.name)' needs a column '\(positionals[gap].name)' too "
                    + "(\(macro)'s main() takes them in order)")
        }
        var used = Dictionary(taken.map { ($0.name, $0.origin ?? "the command line") }) { first, _ in first }
        let base = BatchRunner.names(for: [macro])[0]
        return rows.enumerated().map { index, row in
            let value = Dictionary(uniqueKeysWithValues: zip(columns, row.fields))
            var arguments: [String] = []
            for parameter in parameters where parameter.passing.hasPrefix("--") {
                guard let field = value[parameter.name] else { continue }
                if !parameter.flag.isEmpty {
                    let on = ["1", "true", "yes", "on", "y", "t"].contains(field.lowercased())
                    // A flag that sets the value it defaults to is left out (it has no spelling).
                    if on, parameter.flag != "true" { arguments.append(parameter.passing) }
                    if !on, parameter.flag != "false" { arguments.append("--no-" + parameter.passing.dropFirst(2)) }
                } else {
                    arguments.append("\(parameter.passing)=\(field)")
                }
            }
            // After `--`, a value that starts with '-' is still a value.
            let given = positionals.compactMap { value[$0.name] }
            if !given.isEmpty { arguments += ["--"] + given }
            let origin = "\(label):\(row.line)"
            let name = BatchJobsFile.freeName("\(base).row\(index + 1)", used: &used, origin: origin)
            return BatchJob(name: name, macro: macro, arguments: arguments, origin: origin)
        }
    }
}
