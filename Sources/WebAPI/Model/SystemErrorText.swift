import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The words a user reads for an error Foundation or the system threw: "No such file or
/// directory", never Foundation's "The operation could not be completed" or its
/// `Error Domain=NSCocoaErrorDomain Code=4 … UserInfo={…}`.
///
/// Foundation's file errors carry the system's own error (errno) underneath; that is the
/// reason shown. An error of apimacro's own prints as it describes itself.
public enum SystemErrorText {
    /// Why `error` happened, without the file's path: "Permission denied", "Is a directory".
    public static func reason(_ error: any Error) -> String {
        if let posix = error as? POSIXError { return String(cString: strerror(posix.code.rawValue)) }
        let ns = error as NSError
        guard isFoundation(ns.domain) else {
            let text = String(describing: error)
            return text.contains("Error Domain=") ? "error \(ns.code)" : text
        }
        if let underlying = ns.userInfo[NSUnderlyingErrorKey] as? NSError,
            underlying.domain == NSPOSIXErrorDomain
        {
            return String(cString: strerror(Int32(truncatingIfNeeded: underlying.code)))
        }
        if ns.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(truncatingIfNeeded: ns.code))) }
        if let debug = ns.userInfo["NSDebugDescription"] as? String, !debug.isEmpty { return debug }
        return phrase(code: ns.code)
    }

    /// `error` for a line of its own: "PATH: REASON" when it names a file, else the reason.
    public static func describe(_ error: any Error) -> String {
        let ns = error as NSError
        if isFoundation(ns.domain), let path = ns.userInfo[NSFilePathErrorKey] as? String, !path.isEmpty {
            return "\(path): \(reason(error))"
        }
        return reason(error)
    }

    /// Whether an error of `domain` is Foundation's or the system's (which print their domain and code).
    public static func isFoundation(_ domain: String) -> Bool {
        [NSCocoaErrorDomain, NSPOSIXErrorDomain, NSURLErrorDomain].contains(domain)
    }

    /// Foundation's file error codes in words, for an error with no system error under it.
    private static func phrase(code: Int) -> String {
        switch code {
        case 4, 260: "No such file or directory"
        case 257, 513: "Permission denied"
        case 516: "the file already exists"
        case 640: "No space left on device"
        case 642: "Read-only file system"
        case 261, 517: "the text is not in the expected encoding"
        case 3840, 4864, 4865: "the data is not in the expected format"
        case 256...259: "the file cannot be read"
        case 512...642: "the file cannot be written"
        default: "a system error (\(code))"
        }
    }
}
