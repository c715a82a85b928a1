import Platform
import Spawning

/// `apimacro batch --file jobs.txt`: one job per line, words quoted as in a
/// POSIX shell (`stars octocat --limit 5`, `greet 'Ada Lovelace'`); `#` starts
/// a comment, blank lines are skipped; a first word `name=NAME` names the job
/// (to tell two jobs of one macro apart in the summary), and `tags=smoke,api` tags it (for
/// `batch --tags` and `--exclude-tags`); the two may come in either order.
///
/// Every line is checked before anything runs: a bad one is a `BatchError`
/// naming the file and line.
public struct BatchJobsFile {
    /// How the file is named in messages (its path, or `<stdin>`).
    public let label: String
    public let text: String

    public init(label: String, text: String) {
        self.label = label
        self.text = text
    }

    /// Reads `path`, or standard input for `-`.
    public static func read(_ path: String) throws -> BatchJobsFile {
        if path == "-" {
            let bytes = DescriptorIO.readAll(STDIN_FILENO, limit: Int.max)
            return BatchJobsFile(label: "<stdin>", text: String(decoding: bytes, as: UTF8.self))
        }
        do {
            return BatchJobsFile(label: path, text: try String(contentsOfFile: path, encoding: .utf8))
        } catch {
            throw BatchError("cannot read the jobs file \(path): \(ReportFile.reason(error))")
        }
    }

    /// The jobs, in order.
    ///
    /// Names come from `name=` or the macro's file name; `taken` holds the names
    /// already used by jobs given on the command line.
    public func jobs(after taken: [BatchJob] = []) throws -> [BatchJob] {
        var parsed: [(line: Int, name: String?, words: [String], tags: [String])] = []
        for (offset, line) in text.split(
            omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }
        ).enumerated() {
            let number = offset + 1
            let words: [String]
            do {
                words = try Self.words(String(line))
            } catch let error as BatchError {
                throw BatchError("\(label):\(number): \(error.description)")
            }
            guard var first = words.first else { continue }
            var rest = Array(words.dropFirst())
            var name: String?
            var tags: [String]?
            while first.hasPrefix("tags=") || (first.hasPrefix("name=") && name == nil) {
                if first.hasPrefix("tags=") {
                    guard tags == nil else {
                        throw BatchError("\(label):\(number): tags= is given twice; list every tag once: tags=a,b")
                    }
                    let given = first.dropFirst(5).split(separator: ",").map(String.init)
                    guard !given.isEmpty,
                        given.allSatisfy({ $0.allSatisfy { $0.isLetter || $0.isNumber || "-_.".contains($0) } })
                    else {
                        throw BatchError(
                            "\(label):\(number): \(first) is not a list of tags; write tags=smoke,nightly "
                                + "(letters, digits, '-', '_' and '.', separated by commas)")
                    }
                    guard let next = rest.first else {
                        throw BatchError("\(label):\(number): \(first) tags no job; write '\(first) MACRO [ARGS...]'")
                    }
                    tags = given
                    first = next
                    rest.removeFirst()
                    continue
                }
                let given = String(first.dropFirst(5))
                guard !given.isEmpty, given.allSatisfy({ $0.isLetter || $0.isNumber || "-_.".contains($0) }),
                    !given.hasPrefix(".")
                else {
                    throw BatchError(
                        "\(label):\(number): name=\(given) is not a usable name; use letters, digits, '-', '_' and '.'")
                }
                guard let macro = rest.first else {
                    throw BatchError(
                        "\(label):\(number): name=\(given) names no job; write 'name=\(given) MACRO [ARGS...]'")
                }
                name = given
                first = macro
                rest.removeFirst()
            }
            parsed.append((number, name, [first] + rest, tags ?? []))
        }
        var jobs: [BatchJob] = []
        var used = Dictionary(taken.map { ($0.name, $0.origin ?? "the command line") }) { first, _ in first }
        // Named jobs first, so a generated name never takes a name given on a later line.
        for entry in parsed {
            guard let name = entry.name else { continue }
            if let earlier = used[name] {
                throw BatchError(
                    "\(label):\(entry.line): the name '\(name)' is already used by \(earlier); give each job its own name="
                )
            }
            used[name] = "\(label):\(entry.line)"
        }
        for entry in parsed {
            let name =
                entry.name
                ?? Self.freeName(
                    BatchRunner.names(for: [entry.words[0]])[0], used: &used, origin: "\(label):\(entry.line)")
            jobs.append(
                BatchJob(
                    name: name, macro: entry.words[0], arguments: Array(entry.words.dropFirst()),
                    origin: "\(label):\(entry.line)", tags: entry.tags))
        }
        return jobs
    }

    /// `base`, else `base-2`, `base-3`, … : the first not in `used` (which it joins).
    static func freeName(_ base: String, used: inout [String: String], origin: String) -> String {
        var name = base
        var count = 1
        while used[name] != nil {
            count += 1
            name = "\(base)-\(count)"
        }
        used[name] = origin
        return name
    }

    /// The words of one line as a POSIX shell splits them: whitespace separates words;
    /// '...' is literal; "..." keeps `\"`, `\\`, `\$` and `` \` `` escapes; a backslash
    /// outside quotes escapes the next character; `#` at the start of a word begins a comment.
    static func words(_ line: String) throws -> [String] {
        var words: [String] = []
        var current = ""
        var inWord = false
        var characters = line[...]
        while let character = characters.popFirst() {
            switch character {
            case " ", "\t", "\r":
                if inWord { words.append(current) }
                current = ""
                inWord = false
            case "#" where !inWord:
                return words
            case "'":
                inWord = true
                guard let end = characters.firstIndex(of: "'") else {
                    throw BatchError("unbalanced ' (a quote that is never closed)")
                }
                current += characters[..<end]
                characters = characters[characters.index(after: end)...]
            case "\"":
                inWord = true
                var closed = false
                while let inner = characters.popFirst() {
                    if inner == "\"" {
                        closed = true
                        break
                    }
                    if inner == "\\", let next = characters.first, "\"\\$`".contains(next) {
                        current.append(next)
                        characters = characters.dropFirst()
                    } else {
                        current.append(inner)
                    }
                }
                guard closed else { throw BatchError("unbalanced \" (a quote that is never closed)") }
            case "\\":
                inWord = true
                guard let next = characters.popFirst() else {
                    throw BatchError("a backslash ends the line; jobs cannot continue on the next line")
                }
                current.append(next)
            default:
                inWord = true
                current.append(character)
            }
        }
        if inWord { words.append(current) }
        return words
    }
}
