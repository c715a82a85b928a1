import Platform
import Spawning
import WebAPI

/// The REPL's history file (`$APIMACRO_HOME/history`, mode 0600), as `logout`
/// cleans it: a line that holds a token (a pasted redirect URL, a typed call)
/// must not outlive the login.
struct ReplHistory {
    let file: URL

    /// Removes every line holding `secret`, as typed or percent-encoded; rewrites
    /// the file (mode 0600) only when a line went.
    ///
    /// A missing file is fine.
    func scrub(_ secret: String) throws {
        guard !secret.isEmpty, let data = FileManager.default.contents(atPath: file.path) else { return }
        var forms = [secret]
        let encoded = secret.percentEncoded(allowing: URLBytes.alphanumeric)
        if encoded != secret { forms.append(encoded) }
        let lines = data.split(separator: 0x0A, omittingEmptySubsequences: false).map {
            String(decoding: $0, as: UTF8.self)
        }
        let kept = lines.filter { line in !forms.contains { line.contains($0) } }
        guard kept.count != lines.count else { return }
        let temporary = file.deletingLastPathComponent().appendingPathComponent(".history.\(UUID().uuidString).tmp")
        do {
            // Owner-only from the start: the remaining lines may hold other secrets.
            let fd = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw MacroError(String(cString: strerror(errno))) }
            let written = DescriptorIO.writeAll(fd, Array(kept.joined(separator: "\n").utf8))
            let writeError = errno
            let closed = close(fd) == 0
            guard written, closed else { throw MacroError(String(cString: strerror(written ? errno : writeError))) }
            guard rename(temporary.path, file.path) == 0 else { throw MacroError(String(cString: strerror(errno))) }
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw MacroError(
                "cannot rewrite \(file.path) without the token's lines (\(SystemErrorText.reason(error))); delete it by hand"
            )
        }
    }
}
