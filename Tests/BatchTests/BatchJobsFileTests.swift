import Batch
import Foundation
import Testing

@Suite("batch jobs files")
struct BatchJobsFileTests {
    @Test("lines split as a shell splits them; comments, blank lines and name= ")
    func parsing() throws {
        let file = BatchJobsFile(
            label: "jobs.txt",
            text:
                "# header\n\nstars octocat --limit 5\r\nname=two stars 'a b' \"c \\\"d\\\" $e\" f\\ g  # tail\nstars x\n"
        )
        let jobs = try file.jobs()
        #expect(jobs.map(\.name) == ["stars", "two", "stars-2"])
        #expect(jobs.map(\.macro) == ["stars", "stars", "stars"])
        #expect(jobs[0].arguments == ["octocat", "--limit", "5"])
        #expect(jobs[1].arguments == ["a b", "c \"d\" $e", "f g"])
        #expect(jobs.map(\.origin) == ["jobs.txt:3", "jobs.txt:4", "jobs.txt:5"])
    }

    @Test("a name given on a later line is never taken by a generated one; names from the command line count")
    func names() throws {
        let jobs = try BatchJobsFile(label: "j", text: "stars a\nname=stars stars b\n").jobs(after: [
            BatchJob(name: "x", macro: "x")
        ])
        #expect(jobs.map(\.name) == ["stars-2", "stars"])
        let clash = #expect(throws: BatchError.self) {
            try BatchJobsFile(label: "j", text: "name=x stars\n").jobs(after: [BatchJob(name: "x", macro: "x")])
        }
        #expect(
            clash?.description == "j:1: the name 'x' is already used by the command line; give each job its own name=")
    }

    @Test("unbalanced quotes and a trailing backslash name the line", arguments: ["a 'b\n", "a \"b\n", "a b\\\n"])
    func unbalanced(text: String) {
        let error = #expect(throws: BatchError.self) {
            try BatchJobsFile(label: "jobs.txt", text: "ok\n" + text).jobs()
        }
        #expect(error?.description.hasPrefix("jobs.txt:2: ") == true, "\(String(describing: error))")
    }
}
