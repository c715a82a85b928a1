import Batch
import Testing

@Suite("batch shards")
struct ShardTests {
    static let jobs = (1...10).map { BatchJob(name: "job\($0)", macro: "m", arguments: [String($0)]) }

    @Test("shards K/N of one batch run every job exactly once, jobs K, K+N, ...; the split depends only on the list")
    func split() throws {
        var seen: [String] = []
        for index in 1...3 {
            let shard = try Shard.parse("\(index)/3", environment: [:])
            let names = shard.select(Self.jobs).map(\.name)
            #expect(names == stride(from: index, through: 10, by: 3).map { "job\($0)" })
            seen += names
        }
        #expect(seen.sorted() == Self.jobs.map(\.name).sorted())
        #expect(Set(seen).count == 10)
        #expect(try Shard.parse("1/1", environment: [:]).select(Self.jobs) == Self.jobs)
        #expect(
            try Shard.parse("12/12", environment: [:]).select(Self.jobs) == [], "more shards than jobs: some run none")
    }

    @Test(
        "a malformed K/N is a usage error that says the form",
        arguments: ["", "3", "0/3", "4/3", "1/0", "a/b", "-1/3", "1/3/5", " 1/3", "1.5/3"])
    func malformed(text: String) {
        let error = #expect(throws: BatchError.self) { try Shard.parse(text, environment: [:]) }
        #expect(
            error?.description.contains("K/N (shard K of N, 1 <= K <= N, e.g. 2/3) or auto") == true,
            "\(String(describing: error))")
    }

    @Test("auto reads a Kubernetes Indexed Job's JOB_COMPLETION_INDEX (0-based) and JOB_COMPLETIONS")
    func auto() throws {
        let shard = try Shard.parse("auto", environment: ["JOB_COMPLETION_INDEX": "0", "JOB_COMPLETIONS": "3"])
        #expect(shard == Shard(index: 1, count: 3))
        #expect(
            try Shard.parse("auto", environment: ["JOB_COMPLETION_INDEX": "2", "JOB_COMPLETIONS": "3"]).description
                == "3/3")
    }

    @Test(
        "auto without the variables, or with malformed ones, names the variable and what to set",
        arguments: [
            ([:], "JOB_COMPLETION_INDEX and JOB_COMPLETIONS are not set"),
            (["JOB_COMPLETIONS": "3"], "JOB_COMPLETION_INDEX is not set"),
            (["JOB_COMPLETION_INDEX": "1"], "JOB_COMPLETIONS is not set"),
            (
                ["JOB_COMPLETION_INDEX": "1", "JOB_COMPLETIONS": "x"],
                #"JOB_COMPLETIONS="x" is not a whole number of at least 1"#
            ),
            (
                ["JOB_COMPLETION_INDEX": "3", "JOB_COMPLETIONS": "3"],
                #"JOB_COMPLETION_INDEX="3" is not a whole number from 0 to 2"#
            ),
            (
                ["JOB_COMPLETION_INDEX": "-1", "JOB_COMPLETIONS": "3"],
                #"JOB_COMPLETION_INDEX="-1" is not a whole number from 0 to 2"#
            ),
        ])
    func autoProblems(environment: [String: String], message: String) {
        let error = #expect(throws: BatchError.self) { try Shard.parse("auto", environment: environment) }
        let text = error?.description ?? ""
        #expect(text.hasPrefix(message), "\(text)")
        #expect(text.contains("set it to the Job's spec.completions"), "\(text)")
    }

    @Test("each shard's JUnit file carries the shard in its name")
    func fileNames() throws {
        let shard = try Shard.parse("2/3", environment: [:])
        #expect(shard.fileName("junit.xml") == "junit.shard-2-of-3.xml")
        #expect(shard.fileName("out/report.v1.xml") == "out/report.v1.shard-2-of-3.xml")
        #expect(shard.fileName("dir.d/report") == "dir.d/report.shard-2-of-3")
        #expect(shard.fileName(".hidden") == ".hidden.shard-2-of-3")
    }
}
