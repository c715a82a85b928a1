import CCurl
import Foundation

/// What libcurl trusts when it is told nothing: the CA file and CA directory its build names
/// (Debian: /etc/ssl/certs/ca-certificates.crt and /etc/ssl/certs), asked of the library itself.
public enum LibcurlDefaults {
    /// The built-in `CURLOPT_CAPATH`, or nil (libcurl missing or built without one).
    public static var caPath: String? { paths.capath }
    /// The built-in `CURLOPT_CAINFO`, or nil.
    public static var caFile: String? { paths.cainfo }

    private static let paths: (capath: String?, cainfo: String?) = {
        var api = ccurl_api()
        guard ccurl_load("libcurl.so.4", &api) == 0 else { return (nil, nil) }
        return (
            ccurl_builtin_capath(&api).map { String(cString: $0) },
            ccurl_builtin_cainfo(&api).map { String(cString: $0) }
        )
    }()
}
