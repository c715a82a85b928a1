/// One job of a batch: a macro, the arguments it is run with, and the name the
/// summary, the JUnit report and `--output-dir` know it by.
public struct BatchJob: Sendable, Equatable {
    /// Unique within the batch; file names derive from it.
    public var name: String
    /// What the user gave: a path or a name on the macro path.
    public var macro: String
    /// Passed after the macro (`apimacro run MACRO ARGS...`).
    public var arguments: [String]
    /// Where the job was written (`jobs.txt:3`), for error messages; nil for a macro given on the command line.
    public var origin: String?
    /// Its tags (`tags=smoke,api` in a jobs file), for `--tags` and `--exclude-tags`.
    public var tags: [String] = []

    public init(name: String, macro: String, arguments: [String] = [], origin: String? = nil, tags: [String] = []) {
        self.name = name
        self.macro = macro
        self.arguments = arguments
        self.origin = origin
        self.tags = tags
    }

    /// `jobs` with at least one of `tags` (none given: all), less those with one of `excluded`.
    ///
    /// - Throws: `BatchError` naming a tag no job has, with the tags there are.
    public static func select(_ jobs: [BatchJob], tags: [String], excluding excluded: [String]) throws -> [BatchJob] {
        let known = Set(jobs.flatMap(\.tags))
        for (option, list) in [("--tags", tags), ("--exclude-tags", excluded)] {
            for tag in list where !known.contains(tag) {
                let there =
                    known.isEmpty
                    ? "no job has a tag; tag a job in the jobs file with a first word tags=\(tag)"
                    : "the jobs' tags are \(known.sorted().joined(separator: ", "))"
                throw BatchError("\(option) \(tag): no job has the tag '\(tag)'; \(there)")
            }
        }
        return jobs.filter { job in
            (tags.isEmpty || job.tags.contains(where: tags.contains)) && !job.tags.contains(where: excluded.contains)
        }
    }

    /// Jobs without arguments for `macros`, named by `BatchRunner.names(for:)`.
    public static func jobs(for macros: [String]) -> [BatchJob] {
        zip(BatchRunner.names(for: macros), macros).map { BatchJob(name: $0, macro: $1) }
    }
}
