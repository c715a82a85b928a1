public import Platform
import Spawning

/// The private channel by which an `apimacro run` that `batch` started tells the batch the
/// secrets it knows and the batch does not: a plugin's key from a variable of any name, and
/// every credential learned during the run (a GitHub App's installation token, a token from
/// gh's `hosts.yml` or `gh auth token`, an Instagram token made by a login or a refresh).
///
/// The batch makes the file owner-only in its owner-only work folder, beside the child's
/// unredacted `N.out` and `N.err` (which may hold the same tokens), and removes it with them.
/// The child appends each secret as it learns it, one per line in base64 (a secret may hold
/// any byte), so a child killed at its `--timeout` has told what it knew; the batch reads the
/// file when the child ends and redacts its output, `--output-dir` files and JUnit report.
public struct LearnedSecrets: Sendable {
    /// The file, made by the batch before the child starts.
    public let file: URL

    public init(file: URL) {
        self.file = file
    }

    /// The channel of the child whose `--stats-file` is `stats`: `STATS.secrets`, beside it in
    /// the batch's work folder (the one path both sides derive, so no second flag is needed).
    public init(besideStats stats: URL) {
        file = URL(fileURLWithPath: stats.path + ".secrets")
    }

    /// Appends `secrets` (each at least 4 characters; shorter ones are never redacted).
    ///
    /// The file must exist already and is never followed through a symbolic link; a failure to
    /// write is silent (the batch then redacts what it knows itself).
    public func append(_ secrets: [String]) {
        let lines = secrets.filter { $0.count >= 4 }.map { Data($0.utf8).base64EncodedString() + "\n" }.joined()
        guard !lines.isEmpty else { return }
        let fd = open(file.path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return }
        defer { close(fd) }
        _ = DescriptorIO.writeAll(fd, Array(lines.utf8))
    }

    /// The secrets in the file (none when it cannot be read).
    public func read() -> [String] {
        guard let text = try? String(contentsOf: file, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            Data(base64Encoded: String(line)).flatMap { String(data: $0, encoding: .utf8) }
        }
    }
}
