import Clients
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
}
