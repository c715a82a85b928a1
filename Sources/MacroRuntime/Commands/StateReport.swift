import Clients
import Platform
import Store
import WebAPI

/// `apimacro state show | reset | export`: the operator's view of the state macros keep
/// between runs (`$APIMACRO_HOME/state.db`).
public struct StateReport {
    let settings: Settings
    let state: StateDatabase
    /// Why `APIMACRO_STATE` cannot be used, if it cannot (every command says so rather than
    /// show another place's state).
    let problem: String?

    /// The state of `settings`' home.
    public init(settings: Settings) {
        self.settings = settings
        let location = StoreSession.location(settings)
        state = StateDatabase(home: settings.home, postgres: location.state, redis: location.redis)
        problem = location.problem
    }

    /// The state key `macro` names: a path to a `.py` file gives its key as a run would
    /// (`plugin/macro` inside a plugin), anything else is the key itself.
    public func key(_ macro: String) -> String {
        guard macro.hasSuffix(".py") else { return macro }
        let file =
            macro.hasPrefix("/")
            ? URL(fileURLWithPath: macro) : settings.workingDirectory.appendingPathComponent(macro)
        return StoreSession.key(for: .file(file.standardizedFileURL), settings: settings) ?? macro
    }

    /// `state show [MACRO [KEY]]`: each key and its value (compact JSON) with when it was
    /// committed, the columns aligned; without MACRO, each macro with state and its keys.
    ///
    /// - Throws: `MacroError` when the file cannot be read.
    public func show(_ macro: String?, key: String?) throws -> [String] {
        let entries = try read(macro.map(self.key))
        guard let macro else {
            guard !entries.isEmpty else { return ["no macro has state yet (\(state.shown))"] }
            var counts: [(String, Int, Double)] = []
            for entry in entries {
                if let last = counts.indices.last, counts[last].0 == entry.macro {
                    counts[last].1 += 1
                    counts[last].2 = max(counts[last].2, entry.updated)
                } else {
                    counts.append((entry.macro, 1, entry.updated))
                }
            }
            let width = counts.map(\.0.count).max() ?? 0
            return counts.map { name, count, updated in
                pad(name, width) + "  \(count) key\(count == 1 ? "" : "s")  committed \(Self.time(updated))"
            }
        }
        let chosen = entries.filter { key == nil || $0.key == key }
        guard !chosen.isEmpty else {
            return [
                key.map { "\(self.key(macro)) has no state key \(String(reflecting: $0))" }
                    ?? "\(self.key(macro)) has no state"
            ]
        }
        let width = chosen.map(\.key.count).max() ?? 0
        let valueWidth = min(chosen.map(\.json.count).max() ?? 0, 60)
        return chosen.map { entry in
            pad(entry.key, width) + "  " + pad(entry.json, valueWidth) + "  committed \(Self.time(entry.updated))"
        }
    }

    /// `state export MACRO [KEY]`: the state as one JSON object (only KEY's value with KEY).
    ///
    /// - Throws: `MacroError` when the file cannot be read, or KEY is not there.
    public func export(_ macro: String, key: String?) throws -> String {
        let entries = try read(self.key(macro))
        if let key {
            guard let entry = entries.first(where: { $0.key == key }) else {
                throw MacroError("\(self.key(macro)) has no state key \(String(reflecting: key))")
            }
            return entry.json
        }
        guard !entries.isEmpty else { return "{}" }
        let members = entries.map { "  " + Self.jsonString($0.key) + ": " + $0.json }
        return "{\n" + members.joined(separator: ",\n") + "\n}"
    }

    /// `state reset MACRO [KEY]`: forgets the state (only KEY with KEY), waiting for a run of the
    /// macro that holds it; the line to print.
    ///
    /// - Throws: `MacroError` when a run holds the state past a minute, or the file cannot be written.
    public func reset(_ macro: String, key: String?) async throws -> String {
        let name = self.key(macro)
        if let problem { throw MacroError(problem) }
        let removed: Int
        do {
            removed = try await state.reset(macro: name, key: key, wait: settings.timeout ?? 60)
        } catch let error as StoreError {
            throw MacroError(error.description)
        }
        if let key {
            return removed == 0
                ? "\(name) has no state key \(String(reflecting: key))" : "removed \(key) from \(name)'s state"
        }
        return removed == 0
            ? "\(name) has no state" : "removed \(name)'s state (\(removed) key\(removed == 1 ? "" : "s"))"
    }

    private func read(_ macro: String?) throws -> [StateDatabase.Entry] {
        if let problem { throw MacroError(problem) }
        do {
            return try state.entries(macro: macro)
        } catch let error as StoreError {
            throw MacroError(error.description)
        }
    }

    private func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }

    private static func time(_ seconds: Double) -> String {
        UTCDates.timestamp(seconds)
    }

    private static func jsonString(_ text: String) -> String { JSONText.string(text) }
}

extension StateReport {
    /// `line` as stdout shows it: a stored value's control characters escaped on a terminal.
    public static func shown(_ line: String) -> String { TerminalText.shown(line, on: STDOUT_FILENO) }
}
