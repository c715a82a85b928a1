import Platform
import PythonBridge
import Store
import WebAPI

/// The native half of `apimacro.state`, `apimacro.incremental` and `apimacro.output(to=)`
/// (`Python/apimacro/_store.py` is the rest): reading and staging state, staging rows,
/// committing early.
enum StoreBinding {
    /// Adds `_state_load`, `_state_stage`, `_store_commit`, `_output_rows`, `_run_output` and
    /// `_database_url` to `module`.
    static func install(
        in module: NativeModule, session: StoreSession, workingDirectory: URL,
        warn: @escaping @Sendable (String) -> Void
    )
        throws
    {
        try module.addFunction(
            "_state_load", doc: "Takes this macro's state lock and returns its stored keys and JSON texts."
        ) { _ in
            do {
                _ = try session.key()
            } catch let error as MacroError {
                throw ArgumentError(error.description, raising: .runtimeError)
            }
            let entries = try withoutGIL {
                try await session.open { key in
                    warn("apimacro: waiting for another run of \(key) to finish with its state")
                }
            }
            return try PythonValue.list(entries.map { .tuple([.string($0.key), .string($0.json)]) }).toPython()
        }
        try module.addFunction(
            "_state_stage", doc: "Stages changed state keys: (key, json text or None) pairs."
        ) { arguments in
            let slots = try arguments.bind("_state_stage", ["changes"], required: 1)
            guard case .list(let items) = try PythonValue(python: slots[0] ?? .none) else {
                throw ArgumentError("_state_stage() takes a list of pairs")
            }
            var changes: [(key: String, json: String?)] = []
            for item in items {
                switch item {
                case .tuple(let pair) where pair.count == 2:
                    guard case .string(let key) = pair[0] else { throw ArgumentError("state keys are str") }
                    if case .string(let json) = pair[1] {
                        changes.append((key, json))
                    } else {
                        changes.append((key, nil))
                    }
                default: throw ArgumentError("_state_stage() takes a list of pairs")
                }
            }
            session.transaction.stageState(changes)
            return .none
        }
        try module.addFunction(
            "_store_commit", doc: "Commits the state changes and rows staged so far; returns the rows written."
        ) { _ in
            let written = try withoutGIL { try Self.raising { try session.commit() } }
            return try PythonValue.int(written).toPython()
        }
        try module.addFunction(
            "_run_output", doc: "Whether `run --output FILE` takes what apimacro.output writes."
        ) { _ in
            .bool(session.runOutput != nil)
        }
        try module.addFunction(
            "_database_url", doc: "Whether APIMACRO_DATABASE_URL names where output(rows, table=...) writes."
        ) { _ in
            .bool(session.databaseURL != nil)
        }
        try module.addFunction(
            "_output_rows",
            doc: "Stages rows (lists of (name, value) pairs, a nested value as a 1-tuple of its JSON text)."
        ) { arguments in
            let slots = try arguments.bind("output", ["rows", "to", "table", "key", "mode"], required: 1)
            let rows = try Self.rows(slots[0] ?? .none)
            let target = try Self.optionalString(slots[1], "to")
            let table = try Self.optionalString(slots[2], "table")
            let keys = try Self.keys(slots[3])
            let modeText = try Self.optionalString(slots[4], "mode") ?? "append"
            guard let mode = RunTransaction.Mode(rawValue: modeText) else {
                throw ArgumentError(
                    "output() argument 'mode' must be \"append\" or \"replace\", not \(String(reflecting: modeText))",
                    raising: .valueError)
            }
            try Self.raising {
                if let target = target ?? (session.runOutput == nil && table != nil ? session.databaseURL : nil) {
                    let destination = try Destination.parse(
                        path: target, table: table, relativeTo: workingDirectory)
                    if destination.isTable {
                    } else if table != nil {
                        throw ArgumentError(
                            "output() argument 'table' is for SQLite files; \(target) has no tables",
                            raising: .valueError)
                    }
                    try session.transaction.stage(rows, to: destination, key: keys, mode: mode)
                } else if let output = session.runOutput {
                    try session.transaction.stage(
                        rows, to: output.destination, key: keys.isEmpty ? output.key : keys,
                        mode: mode == .replace ? .replace : output.mode)
                } else {
                    throw ArgumentError(
                        "output() needs to= (a .db, .csv or .jsonl file, or a postgresql:// URL), or table= with "
                            + "APIMACRO_DATABASE_URL set", raising: .valueError)
                }
            }
            return .none
        }
    }

    /// Runs `body`, turning a `StoreError` into the Python exception that fits it: `ValueError`,
    /// `TypeError`, or `OSError` for a lock, a full disk or a file that cannot be written.
    static func raising<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as StoreError {
            switch error.kind {
            case .invalid: throw ArgumentError(error.description, raising: .valueError)
            case .type: throw ArgumentError(error.description, raising: .typeError)
            case .locked, .io, .unreachable, .conflict: throw StoreOSError(description: error.description)
            }
        }
    }

    private static func optionalString(_ value: PyRef?, _ name: String) throws -> String? {
        guard let value, !value.isNone else { return nil }
        return try Arguments.string(value, name, in: "output")
    }

    /// `key=`: a name, a list of names, or None.
    private static func keys(_ value: PyRef?) throws -> [String] {
        guard let value, !value.isNone else { return [] }
        switch try PythonValue(python: value) {
        case .string(let name): return [name]
        case .list(let items), .tuple(let items):
            return try items.map { item in
                guard case .string(let name) = item else {
                    throw ArgumentError("output() argument 'key' must be a str or a list of str")
                }
                return name
            }
        default: throw ArgumentError("output() argument 'key' must be a str or a list of str, not \(value.typeName)")
        }
    }

    /// The rows `_store.py` handed over: dicts with str keys (a list or dict value becomes its JSON text).
    private static func rows(_ value: PyRef) throws -> [Row] {
        guard case .list(let items) = try PythonValue(python: value) else {
            throw ArgumentError("output() rows must be a list")
        }
        return try items.enumerated().map { index, item in
            guard case .dict(let entries) = item else { throw ArgumentError("output() row \(index + 1) is not a dict") }
            return Row(
                try entries.map { entry in
                    guard case .string(let name) = entry.key else {
                        throw ArgumentError(
                            "output() row \(index + 1) has a key that is not a str; column names are str")
                    }
                    return (name, try cell(entry.value, row: index + 1, field: name))
                })
        }
    }

    private static func cell(_ value: PythonValue, row: Int, field: String) throws -> Cell {
        switch value {
        case .none: return .null
        case .bool(let flag): return .bool(flag)
        case .int(let number): return .integer(Int64(number))
        case .float(let number):
            guard number.isFinite else {
                throw ArgumentError(
                    "row \(row) field \(String(reflecting: field)) is \(number), which no destination can hold",
                    raising: .valueError)
            }
            return .real(number)
        case .string(let text): return .text(text)
        case .list, .tuple, .dict:
            var text = ""
            try json(value, into: &text, row: row, field: field)
            return .json(text)
        case .bigInt(let digits):
            throw ArgumentError(
                "row \(row) field \(String(reflecting: field)) is \(digits), past SQLite's 64-bit integers; store it as a str",
                raising: .valueError)
        case .bytes:
            throw ArgumentError("row \(row) field \(String(reflecting: field)) is bytes; decode it to a str first")
        }
    }

    /// Appends `value` as compact JSON (as `json.dumps(..., separators=(",", ":"), ensure_ascii=False)` writes it).
    private static func json(_ value: PythonValue, into text: inout String, row: Int, field: String) throws {
        switch value {
        case .none: text += "null"
        case .bool(let flag): text += flag ? "true" : "false"
        case .int(let number): text += String(number)
        case .bigInt(let digits): text += digits
        case .float(let number):
            guard number.isFinite else {
                throw ArgumentError(
                    "row \(row) field \(String(reflecting: field)) holds \(number), which JSON cannot hold",
                    raising: .valueError)
            }
            text += "\(number)"
        case .string(let string): text += JSONText.string(string)
        case .bytes:
            throw ArgumentError("row \(row) field \(String(reflecting: field)) holds bytes, which JSON cannot hold")
        case .list(let items), .tuple(let items):
            text += "["
            for (offset, item) in items.enumerated() {
                if offset > 0 { text += "," }
                try json(item, into: &text, row: row, field: field)
            }
            text += "]"
        case .dict(let entries):
            text += "{"
            for (offset, entry) in entries.enumerated() {
                guard case .string(let key) = entry.key else {
                    throw ArgumentError(
                        "row \(row) field \(String(reflecting: field)) holds a dict with a key that is not a str")
                }
                if offset > 0 { text += "," }
                text += JSONText.string(key) + ":"
                try json(entry.value, into: &text, row: row, field: field)
            }
            text += "}"
        }
    }
}

/// A lock held too long, a full disk or a file that cannot be written: `OSError` in the macro.
struct StoreOSError: Error, PythonRaisable, CustomStringConvertible {
    let description: String

    func raiseInPython() {
        guard let type = try? Interpreter.import("builtins").attribute("OSError") else {
            PythonRaise.builtin(.runtimeError, description)
            return
        }
        PythonRaise.type(type, description)
    }
}
