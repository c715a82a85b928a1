/// `apimacro batch --shard K/N`: one of N machines' share of a batch.
///
/// The rule, the same on every machine: the batch's jobs are numbered from 1 in the order
/// they are given (macros on the command line, then the jobs file's lines), and shard K
/// runs job number J when (J - 1) mod N = K - 1 — jobs K, K + N, K + 2N, ... Names are
/// given over the whole batch first, so a job keeps its name (and its `--output-dir` files,
/// its HAR and its JUnit test case) whichever shard runs it.
public struct Shard: Sendable, Equatable, CustomStringConvertible {
    /// Which share, from 1 to `count`.
    public let index: Int
    /// How many shares the batch is cut into (at least 1).
    public let count: Int

    /// The form `--shard` takes, for messages.
    public static let form = "K/N (shard K of N, 1 <= K <= N, e.g. 2/3) or auto"

    /// Shard `index` of `count`; nil unless 1 <= index <= count.
    public init?(index: Int, count: Int) {
        guard count >= 1, (1...count).contains(index) else { return nil }
        self.index = index
        self.count = count
    }

    /// `2/3`.
    public var description: String { "\(index)/\(count)" }

    /// Reads `--shard`: `K/N`, or `auto` for a Kubernetes Indexed Job, where
    /// `JOB_COMPLETION_INDEX` (0-based, set by Kubernetes) gives K - 1 and
    /// `JOB_COMPLETIONS` (set in the pod's spec to the Job's `completions`) gives N.
    /// - Throws: `BatchError` (a usage error) saying the form, or which variable is missing or malformed.
    public static func parse(_ text: String, environment: [String: String]) throws -> Shard {
        if text == "auto" { return try auto(environment) }
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = whole(parts[0]), let count = whole(parts[1]) else {
            throw BatchError("--shard \(text) is not of the form \(form)")
        }
        guard let shard = Shard(index: index, count: count) else {
            throw BatchError("--shard \(text): K must be from 1 to N and N at least 1; the form is \(form)")
        }
        return shard
    }

    /// The shard a Kubernetes Indexed Job's pod runs.
    static func auto(_ environment: [String: String]) throws -> Shard {
        let setting =
            "--shard auto reads JOB_COMPLETION_INDEX (set by Kubernetes in an Indexed Job) and JOB_COMPLETIONS "
            + "(set it to the Job's spec.completions); outside Kubernetes give --shard K/N"
        let missing = ["JOB_COMPLETION_INDEX", "JOB_COMPLETIONS"].filter { (environment[$0] ?? "").isEmpty }
        guard missing.isEmpty else {
            throw BatchError(
                "\(missing.joined(separator: " and ")) \(missing.count == 1 ? "is" : "are") not set: \(setting)")
        }
        let indexText = environment["JOB_COMPLETION_INDEX"] ?? ""
        let countText = environment["JOB_COMPLETIONS"] ?? ""
        guard let count = whole(Substring(countText)), count >= 1 else {
            throw BatchError(
                "JOB_COMPLETIONS=\(countText.debugDescription) is not a whole number of at least 1: \(setting)")
        }
        guard let index = whole(Substring(indexText)), let shard = Shard(index: index + 1, count: count) else {
            throw BatchError(
                "JOB_COMPLETION_INDEX=\(indexText.debugDescription) is not a whole number from 0 to \(count - 1) "
                    + "(JOB_COMPLETIONS=\(count)): \(setting)")
        }
        return shard
    }

    /// Digits only (no sign, no spaces), at most 9 of them.
    private static func whole(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.count <= 9, text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(text)
    }

    /// The jobs this shard runs, in their order.
    public func select(_ jobs: [BatchJob]) -> [BatchJob] {
        jobs.enumerated().filter { $0.offset % count == index - 1 }.map(\.element)
    }

    /// `junit.xml` → `junit.shard-2-of-3.xml`: shards writing to one folder never overwrite each other.
    public func fileName(_ path: String) -> String {
        let slash = path.lastIndex(of: "/")
        let name = slash.map { path[path.index(after: $0)...] } ?? Substring(path)
        let tag = "shard-\(index)-of-\(count)"
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return path + "." + tag }
        return String(path[..<dot]) + "." + tag + String(path[dot...])
    }
}
