import Foundation
import WebAPI

#if canImport(Glibc)
    import Glibc
#endif

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
        if let encoded = secret.addingPercentEncoding(withAllowedCharacters: .alphanumerics), encoded != secret {
            forms.append(encoded)
        }
        let text = String(decoding: data, as: UTF8.self)
        let lines = text.components(separatedBy: "\n")
        let kept = lines.filter { line in !forms.contains { line.contains($0) } }
        guard kept.count != lines.count else { return }
        let temporary = file.deletingLastPathComponent().appendingPathComponent(".history.\(UUID().uuidString).tmp")
        do {
            // Owner-only from the start: the remaining lines may hold other secrets.
            let fd = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw MacroError(String(cString: strerror(errno))) }
            let handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
            try handle.write(contentsOf: Data(kept.joined(separator: "\n").utf8))
            try handle.close()
            guard rename(temporary.path, file.path) == 0 else { throw MacroError(String(cString: strerror(errno))) }
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw MacroError(
                "cannot rewrite \(file.path) without the token's lines (\(SystemErrorText.reason(error))); delete it by hand"
            )
        }
    }
}
