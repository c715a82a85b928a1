import Platform

/// The words a user reads for an error Foundation or the system threw: "No such file or
/// directory", never Foundation's "The operation could not be completed" or its
/// `Error Domain=NSCocoaErrorDomain Code=4 … UserInfo={…}`.
///
/// Foundation's file errors carry the system's own error (errno) underneath; that is the
/// reason shown. An error of apimacro's own prints as it describes itself.
public enum SystemErrorText {
    /// Why `error` happened, without the file's path: "Permission denied", "Is a directory".
    public static func reason(_ error: any Error) -> String {
        if let code = posixCode(error) { return String(cString: strerror(code)) }
        guard let cocoa = cocoa(error) else {
            let text = String(describing: error)
            // An NSError of some other domain would print its domain, code and userInfo.
            return text.contains("Error Domain=") ? "error \(error._code)" : text
        }
        if let underlying = cocoa.underlying, let code = posixCode(underlying) {
            return String(cString: strerror(code))
        }
        if let debug = cocoa.userInfo["NSDebugDescription"] as? String, !debug.isEmpty { return debug }
        return phrase(code: cocoa.code.rawValue)
    }

    /// `error` for a line of its own: "PATH: REASON" when it names a file, else the reason.
    public static func describe(_ error: any Error) -> String {
        if let path = cocoa(error)?.filePath, !path.isEmpty { return "\(path): \(reason(error))" }
        return reason(error)
    }

    /// Whether `error` is Foundation's or the system's (which print their domain and code).
    public static func isSystem(_ error: any Error) -> Bool {
        posixCode(error) != nil || cocoa(error) != nil
    }

    /// The errno of a `POSIXError`, or of an `NSError` in the POSIX domain (which does not cast
    /// to `POSIXError`).
    private static func posixCode(_ error: any Error) -> Int32? {
        if let posix = error as? POSIXError { return posix.code.rawValue }
        return error._domain == "NSPOSIXErrorDomain" ? Int32(truncatingIfNeeded: error._code) : nil
    }

    /// `error` as a `CocoaError`: one thrown as such by `FoundationEssentials`, or an `NSError`
    /// in Foundation's Cocoa or URL domain (an `NSError` of any domain casts to `CocoaError`,
    /// hence the domain first; `NSError` itself is not in `FoundationEssentials`).
    private static func cocoa(_ error: any Error) -> CocoaError? {
        if type(of: error) == CocoaError.self { return error as? CocoaError }
        return isFoundation(error._domain) ? error as? CocoaError : nil
    }

    /// Whether an error of `domain` is Foundation's or the system's (which print their domain and code).
    public static func isFoundation(_ domain: String) -> Bool {
        ["NSCocoaErrorDomain", "NSPOSIXErrorDomain", "NSURLErrorDomain"].contains(domain)
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
