import Clients
import Platform
import WebAPI

/// The process's own environment, made ready before anything else runs.
public enum ProcessEnvironment {
    /// Removes the variables libcurl would act on when it loads (`CurlEnvironment`):
    /// `SSLKEYLOGFILE`, which makes it write TLS session secrets.
    ///
    /// Call it first in `main`, while the process has one thread. A macro's `os.environ` and its
    /// child processes no longer see them either (the embedded Python ignores its environment
    /// for its own settings, `SSLKEYLOGFILE` included).
    public static func prepare() {
        CurlEnvironment.removeVariablesReadAtLoad()
    }

    /// The environment's variables by name, as `ProcessInfo.processInfo.environment` gives
    /// them (a name given twice keeps its last value; an entry without `=` is left out; bytes
    /// that are not UTF-8 become U+FFFD), read straight from the C library's `environ`.
    ///
    /// FoundationEssentials' `environment` spends ~10 k instructions a variable building its
    /// dictionary (0.4 M of an empty macro's 38 M, 1 % of its start); this takes a tenth of it.
    public static var variables: [String: String] {
        var found: [String: String] = [:]
        var entry = environ
        while let text = entry.pointee {
            let bytes = UnsafeBufferPointer(
                start: UnsafeRawPointer(text).assumingMemoryBound(to: UInt8.self), count: strlen(text))
            if let equals = bytes.firstIndex(of: UInt8(ascii: "=")) {
                let name = String(decoding: UnsafeBufferPointer(rebasing: bytes[..<equals]), as: UTF8.self)
                found[name] = String(decoding: UnsafeBufferPointer(rebasing: bytes[(equals + 1)...]), as: UTF8.self)
            }
            entry += 1
        }
        return found
    }
}
