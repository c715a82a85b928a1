import Foundation
import TestSupport
import Testing

@testable import PluginHost

/// `TOMLParser` against the reference, CPython's `tomllib` (Debian's `/usr/bin/python3`, run
/// once as a subprocess over the whole corpus): the same documents are accepted, with the same
/// values, and the same are refused.
///
/// The corpus: `TOMLCorpus`, the repository's `plugin.toml` files, and 3,000 documents made from
/// them by random edits (a fixed seed, so every run compares the same documents): characters
/// inserted, deleted or replaced from TOML's own alphabet, lines duplicated or swapped.
/// Where the two may differ by design: an integer past 64 bits (tomllib keeps it; here it is an
/// error) and nesting past `TOMLParser.maximumDepth` (tomllib recurses until Python stops it).
@Suite("TOMLParser agrees with CPython's tomllib")
struct TOMLDifferentialTests {
    /// What tomllib made of a document, in the tagged form `reference` prints.
    enum Outcome: Equatable, CustomStringConvertible {
        case value(Tagged)
        case error
        /// Valid for tomllib, but an integer is past 64 bits: an error here.
        case outOfRange
        /// tomllib ran out of Python's recursion: not compared.
        case tooDeep

        var description: String {
            switch self {
            case .value(let tagged): "\(tagged)"
            case .error: "an error"
            case .outOfRange: "an integer past 64 bits"
            case .tooDeep: "too deep for Python"
            }
        }
    }

    /// A value with its TOML type, comparable across the two parsers (floats by bit pattern).
    indirect enum Tagged: Equatable, CustomStringConvertible {
        case string(String)
        case integer(String)
        case float(String)
        case bool(Bool)
        case date(kind: String, text: String)
        case array([Tagged])
        case table([String: Tagged])

        var description: String {
            switch self {
            case .string(let text): text.debugDescription
            case .integer(let text), .float(let text): text
            case .bool(let value): "\(value)"
            case .date(let kind, let text): "\(kind) \(text)"
            case .array(let items): "[" + items.map(\.description).joined(separator: ", ") + "]"
            case .table(let table):
                "{"
                    + table.keys.sorted().map { "\($0.debugDescription): \(table[$0]?.description ?? "")" }
                    .joined(separator: ", ") + "}"
            }
        }
    }

    /// Reads a JSON list of documents on stdin; prints one JSON result per document.
    static let reference = #"""
        import datetime, json, math, struct, sys, tomllib

        def tag(value):
            if isinstance(value, bool):
                return {"t": "bool", "v": value}
            if isinstance(value, int):
                if not -2**63 <= value < 2**63:
                    raise OverflowError("past 64 bits")
                return {"t": "integer", "v": str(value)}
            if isinstance(value, float):
                return {"t": "float", "v": "nan" if math.isnan(value) else struct.pack(">d", value).hex()}
            if isinstance(value, str):
                return {"t": "string", "v": value}
            if isinstance(value, datetime.datetime):
                return {"t": "datetime" if value.tzinfo else "datetime-local", "v": value.isoformat()}
            if isinstance(value, datetime.date):
                return {"t": "date-local", "v": value.isoformat()}
            if isinstance(value, datetime.time):
                return {"t": "time-local", "v": value.isoformat()}
            if isinstance(value, list):
                return {"t": "array", "v": [tag(item) for item in value]}
            return {"t": "table", "v": {key: tag(item) for key, item in value.items()}}

        for text in json.load(sys.stdin):
            try:
                result = {"value": tag(tomllib.loads(text))}
            except tomllib.TOMLDecodeError:
                result = {"error": True}
            except OverflowError:
                result = {"outOfRange": True}
            except RecursionError:
                result = {"tooDeep": True}
            print(json.dumps(result))
        """#

    /// tomllib's outcome for each document.
    static func referenceOutcomes(_ documents: [String]) throws -> [Outcome] {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("toml-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = folder.appendingPathComponent("documents.json")
        let output = folder.appendingPathComponent("results.jsonl")
        try JSONSerialization.data(withJSONObject: documents).write(to: input)
        let python = try Spawned(
            "/usr/bin/python3", ["-c", reference], environment: ["PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8"],
            stdin: .file(input.path), stdout: .file(output.path),
            stderr: .file(folder.appendingPathComponent("err").path))
        let ended = python.waitUntilExit()
        let errors = (try? String(contentsOf: folder.appendingPathComponent("err"), encoding: .utf8)) ?? ""
        guard ended.status == 0, !ended.signalled else {
            throw ProcessFailure("python3 and tomllib failed (\(ended.status)): \(errors)")
        }
        let lines = try String(contentsOf: output, encoding: .utf8).split(separator: "\n")
        guard lines.count == documents.count else {
            throw ProcessFailure("python3 answered \(lines.count) of \(documents.count) documents: \(errors)")
        }
        return try lines.map { line in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] ?? [:]
            if let value = object["value"] { return .value(try tagged(python: value)) }
            if object["outOfRange"] != nil { return .outOfRange }
            if object["tooDeep"] != nil { return .tooDeep }
            return .error
        }
    }

    static func tagged(python: Any) throws -> Tagged {
        guard let object = python as? [String: Any], let type = object["t"] as? String, let value = object["v"] else {
            throw ProcessFailure("not a tagged value: \(python)")
        }
        switch type {
        case "bool": return .bool(value as? Bool ?? false)
        case "integer": return .integer(value as? String ?? "")
        case "float": return .float(value as? String ?? "")
        case "string": return .string(value as? String ?? "")
        case "array": return .array(try (value as? [Any] ?? []).map(tagged(python:)))
        case "table": return .table(try (value as? [String: Any] ?? [:]).mapValues(tagged(python:)))
        default: return .date(kind: type, text: value as? String ?? "")
        }
    }

    /// Ours, in the same form (a date's kind from the shape of its text).
    static func tagged(_ value: TOMLValue) -> Tagged {
        switch value {
        case .string(let text): return .string(text)
        case .integer(let number): return .integer(String(number))
        case .double(let number):
            if number.isNaN { return .float("nan") }
            let bits = String(number.bitPattern, radix: 16)
            return .float(String(repeating: "0", count: 16 - bits.count) + bits)
        case .bool(let flag): return .bool(flag)
        case .array(let items): return .array(items.map(tagged))
        case .table(let table): return .table(table.mapValues(tagged))
        case .other(let text):
            let kind =
                !text.contains("-")
                ? "time-local"
                : !text.contains("T")
                    ? "date-local"
                    : text.dropFirst(19).contains(where: { $0 == "+" || $0 == "-" }) ? "datetime" : "datetime-local"
            return .date(kind: kind, text: text)
        }
    }

    /// 3,000 documents made by random edits of the valid ones (a fixed seed).
    static func mutations(of seeds: [String], count: Int) -> [String] {
        var generator = SplitMix64(seed: 24)
        let alphabet = Array(
            "abc_-0123456789.=\"'#[]{},+:TZezxob \t\n\\\u{0}\u{7F}\u{E9}".unicodeScalars)
        return (0..<count).map { _ in
            var text = Array(seeds[Int(generator.next() % UInt64(seeds.count))].unicodeScalars)
            for _ in 0..<(1 + Int(generator.next() % 3)) {
                let position = text.isEmpty ? 0 : Int(generator.next() % UInt64(text.count))
                let character = alphabet[Int(generator.next() % UInt64(alphabet.count))]
                switch generator.next() % 5 {
                case 0: text.insert(character, at: position)
                case 1: if !text.isEmpty { text.remove(at: position) }
                case 2: if !text.isEmpty { text[position] = character }
                case 3:
                    var lines = String(String.UnicodeScalarView(text)).split(
                        separator: "\n", omittingEmptySubsequences: false)
                    if !lines.isEmpty { lines.insert(lines[Int(generator.next() % UInt64(lines.count))], at: 0) }
                    text = Array(lines.joined(separator: "\n").unicodeScalars)
                default:
                    var lines = String(String.UnicodeScalarView(text)).split(
                        separator: "\n", omittingEmptySubsequences: false)
                    if lines.count > 1 { lines.swapAt(0, Int(generator.next() % UInt64(lines.count))) }
                    text = Array(lines.joined(separator: "\n").unicodeScalars)
                }
            }
            return String(String.UnicodeScalarView(text))
        }
    }

    /// The repository's `plugin.toml` files.
    static func pluginManifests() throws -> [String] {
        let plugins = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("plugins")
        return try FileManager.default.contentsOfDirectory(atPath: plugins.path).sorted().compactMap { name in
            try? String(contentsOf: plugins.appendingPathComponent("\(name)/plugin.toml"), encoding: .utf8)
        }
    }

    @Test("the corpus, the plugins and 3,000 random edits of them: the same verdicts and values")
    func agreesWithTomllib() throws {
        let seeds = TOMLCorpus.valid + (try Self.pluginManifests())
        let documents =
            seeds + TOMLCorpus.invalid + TOMLCorpus.outOfRange + Self.mutations(of: seeds, count: 3_000)
        let expected = try Self.referenceOutcomes(documents)
        var compared = (valid: 0, invalid: 0)
        var disagreements: [String] = []
        for (text, reference) in zip(documents, expected) {
            let ours: Outcome
            do {
                ours = .value(Self.tagged(.table(try TOMLValue.parse(text))))
            } catch is TOMLSyntaxError {
                ours = .error
            } catch {
                disagreements.append("\(text.debugDescription): not a TOMLSyntaxError: \(error)")
                continue
            }
            switch reference {
            case .tooDeep: continue
            case .outOfRange where ours == .error, .error where ours == .error: compared.invalid += 1
            case .value where ours == reference: compared.valid += 1
            default: disagreements.append("\(text.debugDescription): tomllib: \(reference); here: \(ours)")
            }
        }
        #expect(
            disagreements.isEmpty,
            "\(disagreements.count) disagreements:\n\(disagreements.prefix(20).joined(separator: "\n"))")
        // Both verdicts are well represented, so the comparison means something either way.
        #expect(compared.valid > 500 && compared.invalid > 1_000, "\(compared)")
    }
}
