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

    public init(name: String, macro: String, arguments: [String] = [], origin: String? = nil) {
        self.name = name
        self.macro = macro
        self.arguments = arguments
        self.origin = origin
    }

    /// Jobs without arguments for `macros`, named by `BatchRunner.names(for:)`.
    public static func jobs(for macros: [String]) -> [BatchJob] {
        zip(BatchRunner.names(for: macros), macros).map { BatchJob(name: $0, macro: $1) }
    }
}
