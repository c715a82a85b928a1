/// What may still be done to each key of a document being parsed: the bookkeeping behind TOML's
/// rules that a table is defined once and that an inline table or array is never extended.
///
/// The same structure as CPython's `tomllib` (`Flags` in `_parser.py`), so both agree on which
/// redefinitions are errors.
final class TOMLFlags {
    enum Flag: Hashable {
        /// An inline table or an array written as a value: nothing may be added to it or below it.
        case frozen
        /// A table made by a `[header]`, or by dotted keys in an earlier section: no `[header]`
        /// (and no dotted key) may define it again.
        case explicitNest
    }

    private final class Node {
        var flags: Set<Flag> = []
        /// Flags that hold for this key and every key below it.
        var recursiveFlags: Set<Flag> = []
        var nested: [String: Node] = [:]
    }

    private struct Pending: Hashable {
        let key: [String]
        let flag: Flag
    }

    private let root = Node()
    /// Set when the next `[header]` starts: the tables dotted keys made in this section.
    private var pending: Set<Pending> = []

    /// Marks `key` with `flag` once the current section ends.
    func addPending(_ key: [String], _ flag: Flag) {
        pending.insert(Pending(key: key, flag: flag))
    }

    /// Applies what `addPending` kept (a new `[header]` starts).
    func finalizePending() {
        for item in pending { set(item.key, item.flag, recursive: false) }
        pending.removeAll()
    }

    /// Forgets every flag of `key` and below (a new `[[array]]` element starts afresh).
    func unsetAll(_ key: [String]) {
        guard let stem = key.last else { return }
        var node = root
        for part in key.dropLast() {
            guard let next = node.nested[part] else { return }
            node = next
        }
        node.nested[stem] = nil
    }

    /// Marks `key` with `flag`, for the key alone or (`recursive`) for everything below it too.
    func set(_ key: [String], _ flag: Flag, recursive: Bool) {
        var node = root
        for part in key {
            if let next = node.nested[part] {
                node = next
            } else {
                let next = Node()
                node.nested[part] = next
                node = next
            }
        }
        if recursive { node.recursiveFlags.insert(flag) } else { node.flags.insert(flag) }
    }

    /// Whether `key` has `flag`, itself or through a recursive flag of a key above it.
    func isSet(_ key: [String], _ flag: Flag) -> Bool {
        guard let stem = key.last else { return false }  // the document itself has no flags
        var node = root
        for part in key.dropLast() {
            guard let next = node.nested[part] else { return false }
            if next.recursiveFlags.contains(flag) { return true }
            node = next
        }
        guard let last = node.nested[stem] else { return false }
        return last.flags.contains(flag) || last.recursiveFlags.contains(flag)
    }
}
