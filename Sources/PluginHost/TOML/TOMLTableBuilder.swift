/// A table while its document is being parsed: headers and dotted keys keep adding to tables
/// made earlier, so they are references until `value()` turns the whole tree into `TOMLValue`s.
final class TOMLTableBuilder {
    enum Entry {
        /// A table made by a header or a dotted key (still open to more keys).
        case table(TOMLTableBuilder)
        /// An array of tables (`[[name]]`), its last element open to more keys.
        case tables([TOMLTableBuilder])
        /// A value written after `=`, inline tables and arrays included (never extended).
        case value(TOMLValue)
    }

    var entries: [String: Entry] = [:]

    /// The table at `key` below this one, making the missing ones; through an array of tables
    /// to its last element (unless `throughArrays` is false).
    ///
    /// Nil when a key on the way holds a value (`tomllib`'s `get_or_create_nest`).
    func nest(_ key: some Sequence<String>, throughArrays: Bool = true) -> TOMLTableBuilder? {
        var table = self
        for part in key {
            switch table.entries[part] {
            case nil:
                let next = TOMLTableBuilder()
                table.entries[part] = .table(next)
                table = next
            case .table(let next)?:
                table = next
            case .tables(let elements)?:
                guard throughArrays, let last = elements.last else { return nil }
                table = last
            case .value?:
                return nil
            }
        }
        return table
    }

    /// Adds an empty table to the array of tables at `key` (making the array when missing);
    /// false when `key` holds something else.
    func appendTable(at key: [String]) -> Bool {
        guard let stem = key.last, let parent = nest(key.dropLast()) else { return false }
        switch parent.entries[stem] {
        case nil:
            parent.entries[stem] = .tables([TOMLTableBuilder()])
        case .tables(var elements)?:
            parent.entries[stem] = nil  // the array alone holds its storage: appended in place
            elements.append(TOMLTableBuilder())
            parent.entries[stem] = .tables(elements)
        case .table?, .value?:
            return false
        }
        return true
    }

    /// The finished table.
    func value() -> [String: TOMLValue] {
        entries.mapValues { entry in
            switch entry {
            case .table(let table): .table(table.value())
            case .tables(let tables): .array(tables.map { .table($0.value()) })
            case .value(let value): value
            }
        }
    }
}
