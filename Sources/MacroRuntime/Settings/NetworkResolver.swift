import Clients
import Platform
import Spawning
import WebAPI

/// Resolves `NetworkSettings` once from the environment (with `config.toml` beneath it) and
/// checks every value, so a bad proxy or CA bundle stops apimacro at start with one line
/// naming the variable, never in the middle of a macro.
///
/// Each setting is looked up in this order; the first that is set and not empty wins:
///
/// | setting | apimacro's own (env, then config.toml key) | standard variables |
/// |---|---|---|
/// | proxy for https URLs | `APIMACRO_HTTPS_PROXY` (`https_proxy`) | `https_proxy`, `HTTPS_PROXY` |
/// | proxy for http URLs | `APIMACRO_HTTP_PROXY` (`http_proxy`) | `http_proxy`, `HTTP_PROXY` |
/// | hosts reached directly | `APIMACRO_NO_PROXY` (`no_proxy`) | `no_proxy`, `NO_PROXY` |
/// | certificate authorities | `APIMACRO_CA_BUNDLE` (`ca_bundle`) | `SSL_CERT_FILE` |
///
/// The lower-case standard form wins over the upper-case one when both are set, as in curl.
/// `HTTP_PROXY` is ignored when `REQUEST_METHOD` is set (a CGI program, where a request's
/// `Proxy:` header arrives as `HTTP_PROXY`: the "httpoxy" attack).
enum NetworkResolver {
    static let httpsProxyVariables = ["APIMACRO_HTTPS_PROXY", "https_proxy", "HTTPS_PROXY"]
    static let httpProxyVariables = ["APIMACRO_HTTP_PROXY", "http_proxy", "HTTP_PROXY"]
    static let noProxyVariables = ["APIMACRO_NO_PROXY", "no_proxy", "NO_PROXY"]
    static let caBundleVariables = ["APIMACRO_CA_BUNDLE", "SSL_CERT_FILE"]

    /// The network settings of `check`'s environment.
    ///
    /// Relative CA-bundle paths (and `~/`) are resolved against `workingDirectory` (and
    /// `HOME`).
    static func resolve(_ check: SettingCheck, workingDirectory: URL) throws -> NetworkSettings {
        var httpVariables = httpProxyVariables
        if check.value("REQUEST_METHOD") != nil { httpVariables.removeAll { $0 == "HTTP_PROXY" } }
        let httpsProxy = try first(httpsProxyVariables, in: check).map {
            try ProxyURL.parse($0.value, source: $0.source).normalized
        }
        let httpProxy = try first(httpVariables, in: check).map {
            try ProxyURL.parse($0.value, source: $0.source).normalized
        }
        let noProxy = first(noProxyVariables, in: check).map { noProxyList($0.value) } ?? []
        let caBundle = try first(caBundleVariables, in: check).map {
            try checkedBundle(
                $0.value, source: $0.source, workingDirectory: workingDirectory, home: check.value("HOME")?.value)
        }
        return NetworkSettings(httpProxy: httpProxy, httpsProxy: httpsProxy, noProxy: noProxy, caBundle: caBundle)
    }

    /// The first of `variables` that is set and not empty, with where it came from.
    private static func first(_ variables: [String], in check: SettingCheck) -> (value: String, source: String)? {
        for variable in variables {
            if let found = check.value(variable), !NetworkResolver.trimmed(found.value).isEmpty {
                return found
            }
        }
        return nil
    }

    /// `NO_PROXY`'s entries: separated by commas (or white space, as curl also accepts).
    static func noProxyList(_ text: String) -> [String] {
        text.split(whereSeparator: { $0 == "," || $0.isWhitespace }).map(String.init)
    }

    /// The absolute path of a CA bundle that exists, is a regular file, can be read and
    /// holds at least one PEM certificate; else a `MacroError` naming `source`.
    static func checkedBundle(_ text: String, source: String, workingDirectory: URL, home: String?) throws -> String {
        var path = NetworkResolver.trimmed(text)
        if path == "~" || path.hasPrefix("~/"), let home { path = home + path.dropFirst() }
        let url = path.hasPrefix("/") ? URL(fileURLWithPath: path) : workingDirectory.appendingPathComponent(path)
        let absolute = url.standardizedFileURL.path
        let accepted =
            "accepted: a readable PEM file of certificate authorities, such as /etc/ssl/certs/ca-certificates.crt"
        func problem(_ what: String) -> MacroError { MacroError("\(source): '\(text)' \(what); \(accepted)") }
        let fileManager = FileManager.default
        var isFolder = false
        guard fileManager.fileExists(atPath: absolute, isFolder: &isFolder) else { throw problem("does not exist") }
        if isFolder { throw problem("is a folder, not a file") }
        // The type of the file itself (through symbolic links): a FIFO or a device is never opened.
        let resolved = URL(fileURLWithPath: absolute).resolvingSymlinksInPath().path
        // lstat, as `attributesOfItem(atPath:)[.type]` looked (the path is resolved already),
        // without its attribute dictionary (0.5 M instructions at every start).
        var info = stat()
        guard lstat(resolved, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw problem("is not a regular file")
        }
        let fd = fileManager.isReadableFile(atPath: resolved) ? open(resolved, O_RDONLY | O_CLOEXEC) : -1
        guard fd >= 0 else { throw problem("cannot be read (check its permissions)") }
        defer { close(fd) }
        // A bundle is text; 16 MiB is far more than any (Debian's holds ~150 certificates in 200 KB).
        let data = Self.prefix(of: fd, limit: 16 << 20)
        // Searched as bytes: decoding 200 KB into a String and searching it cost
        // about 1 M instructions of every start with SSL_CERT_FILE set.
        let holdsCertificate = data.withUnsafeBytes { bytes in
            NetworkResolver.holds("-----BEGIN ", in: bytes) && NetworkResolver.holds("CERTIFICATE-----", in: bytes)
        }
        guard holdsCertificate else {
            throw problem("holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
        }
        return absolute
    }

    /// The first `limit` bytes of `fd` (fewer at its end; after a failed read, those read before).
    ///
    /// Read straight into the array's storage, sized by `fstat` (the file is a regular one): an
    /// append of each chunk went element by element, 0.4 M instructions of every start for
    /// Debian's 214 KB bundle. A file that grows meanwhile is read up to the size seen.
    private static func prefix(of fd: Int32, limit: Int) -> [UInt8] {
        var info = stat()
        return DescriptorIO.readPrefix(fd, count: fstat(fd, &info) == 0 ? min(limit, Int(info.st_size)) : 0)
    }

    /// Whether `marker` occurs in `bytes` (memchr to each candidate first byte, then memcmp).
    private static func holds(_ marker: String, in bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress else { return false }
        var marker = marker
        return marker.withUTF8 { needle in
            guard let needleBase = needle.baseAddress, let firstByte = needle.first else { return true }
            var offset = 0
            while bytes.count - offset >= needle.count {
                guard let found = memchr(base + offset, Int32(firstByte), bytes.count - offset - needle.count + 1)
                else {
                    return false
                }
                if memcmp(found, needleBase, needle.count) == 0 { return true }
                offset = base.distance(to: UnsafeRawPointer(found)) + 1
            }
            return false
        }
    }

    /// `text` without the spaces and tabs (Unicode `Zs` and tab: `CharacterSet.whitespaces`)
    /// at either end; Foundation's `trimmingCharacters` bridged through NSString for this,
    /// about 0.9 M instructions at every start.
    static func trimmed(_ text: String) -> String {
        func blank(_ scalar: Unicode.Scalar) -> Bool {
            scalar == "\t" || scalar.properties.generalCategory == .spaceSeparator
        }
        let scalars = text.unicodeScalars
        guard let first = scalars.firstIndex(where: { !blank($0) }),
            let last = scalars.lastIndex(where: { !blank($0) })
        else { return "" }
        return String(scalars[first...last])
    }
}
