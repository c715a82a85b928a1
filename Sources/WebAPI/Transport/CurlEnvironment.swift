import Platform

/// The environment variables libcurl reads on its own, and why none of them changes what the
/// transport does: apimacro resolves its network settings once (`NetworkSettings`) and libcurl
/// is given every one explicitly.
///
/// Audited in Debian's libcurl 7.88.1 (OpenSSL), every `getenv` of a release build:
///
/// | variable | libcurl reads it | made inert by |
/// |---|---|---|
/// | `http_proxy`, `HTTPS_PROXY`, `ALL_PROXY` (any case, any scheme) | when `CURLOPT_PROXY` is unset | `CURLOPT_PROXY` always set, `""` for none |
/// | `no_proxy`, `NO_PROXY` | when `CURLOPT_NOPROXY` is unset, even beside a proxy it was given | `CURLOPT_NOPROXY` always `""`: `NetworkSettings` decides |
/// | `SSLKEYLOGFILE` | in `curl_global_init`: appends every TLS session's secrets there | removed from the process (`removeVariablesReadAtLoad`) |
/// | `CURL_DEBUG`, `CURL_TIME` and the other `CURL_*` test variables | only in a debug build of libcurl | Debian's is a release build |
/// | `CURL_SSL_BACKEND` | only when built with several TLS backends | Debian's has one |
/// | `HOME`, `USERPROFILE` | only to find `.netrc`, with `CURLOPT_NETRC` | never set |
/// | `NTLMUSER`, `LOGNAME`, `USER`, `CURL_NTLM_WB_FILE` | only for NTLM through winbind | only Basic is used (a proxy URL's user) |
///
/// `CURL_CA_BUNDLE` is the curl tool's, not libcurl's; `SSL_CERT_FILE` and `SSL_CERT_DIR` are
/// OpenSSL's default paths, which libcurl loads only when it has neither a CA file nor a CA
/// directory (it always has one). Watched in a real run (`TransportEnvironmentTests`), libcurl
/// asks for `SSLKEYLOGFILE` alone. The libraries it loads read their own at load
/// (OpenSSL `OPENSSL_CONF`, GnuTLS and p11-kit theirs): the system's TLS configuration, not
/// covered.
public enum CurlEnvironment {
    /// The variables libcurl acts on when it loads, whatever the handle's options say.
    public static let variablesReadAtLoad = ["SSLKEYLOGFILE"]

    /// Removes `variablesReadAtLoad` from the process's environment, so that no key log is
    /// written: apimacro offers no setting that writes one.
    ///
    /// Call it first in `main`, while the process has one thread (`unsetenv` is not safe while
    /// another thread reads the environment); `CurlLibrary` calls it again just before
    /// `curl_global_init`, where it changes nothing unless a macro set one meanwhile (Python's
    /// `os.environ` writes through to the process's environment).
    public static func removeVariablesReadAtLoad() {
        for variable in variablesReadAtLoad where getenv(variable) != nil {
            unsetenv(variable)
        }
    }
}
