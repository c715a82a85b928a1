import Clients
import Foundation
import Testing
import WebAPI

@testable import MacroRuntime

@Suite("network settings: proxy variables, NO_PROXY and the CA bundle, resolved once")
struct NetworkResolverTests {
    /// A fresh folder, removed by the caller.
    private func folder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("apimacro-network-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    private let pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"

    /// The message of the `MacroError` that resolving `environment` throws.
    private func failure(_ environment: [String: String], workingDirectory: URL? = nil) -> String {
        do {
            if let workingDirectory {
                _ = try Settings(environment: environment, workingDirectory: workingDirectory)
            } else {
                _ = try Settings(environment: environment)
            }
            return "no error"
        } catch {
            return String(describing: error)
        }
    }

    @Test("no variables: direct, the system's certificate authorities")
    func nothingSet() throws {
        #expect(try Settings(environment: ["HOME": "/nonexistent"]).network == .direct)
    }

    @Test("the lower-case form wins over the upper-case one, as in curl; apimacro's own variable over both")
    func precedence() throws {
        let both = try Settings(environment: [
            "https_proxy": "http://lower:1", "HTTPS_PROXY": "http://upper:2",
            "http_proxy": "http://lower:3", "HTTP_PROXY": "http://upper:4",
            "no_proxy": "lower.example", "NO_PROXY": "upper.example",
        ]).network
        #expect(both.httpsProxy == "http://lower:1")
        #expect(both.httpProxy == "http://lower:3")
        #expect(both.noProxy == ["lower.example"])
        let upper = try Settings(environment: ["HTTPS_PROXY": "http://upper:2", "NO_PROXY": "upper.example"]).network
        #expect(upper.httpsProxy == "http://upper:2")
        #expect(upper.noProxy == ["upper.example"])
        let own = try Settings(environment: [
            "APIMACRO_HTTPS_PROXY": "http://own:5", "https_proxy": "http://lower:1", "APIMACRO_NO_PROXY": "own.example",
            "no_proxy": "lower.example",
        ]).network
        #expect(own.httpsProxy == "http://own:5")
        #expect(own.noProxy == ["own.example"])
        // An empty variable is as if unset: the next one is used.
        #expect(
            try Settings(environment: ["https_proxy": "", "HTTPS_PROXY": "http://upper:2"]).network.httpsProxy
                == "http://upper:2")
    }

    @Test("a proxy URL is normalized: no scheme means http, the scheme's port is written out, userinfo kept")
    func normalized() throws {
        let network = try Settings(environment: [
            "HTTPS_PROXY": "proxy.corp.example:3128", "HTTP_PROXY": "HTTP://u%40corp:p%3Aw@Proxy.Corp.Example/",
        ]).network
        #expect(network.httpsProxy == "http://proxy.corp.example:3128")
        #expect(network.httpProxy == "http://u%40corp:p%3Aw@proxy.corp.example:80")
        #expect(
            try Settings(environment: ["HTTPS_PROXY": "https://secure.example"]).network.httpsProxy
                == "https://secure.example:443")
        #expect(
            try Settings(environment: ["HTTPS_PROXY": "http://[::1]:3128"]).network.httpsProxy == "http://[::1]:3128")
    }

    @Test("NO_PROXY entries are separated by commas or spaces")
    func noProxyList() throws {
        let network = try Settings(environment: ["NO_PROXY": " localhost, .corp.example 10.0.0.0/8,,[::1]:8080 "])
            .network
        #expect(network.noProxy == ["localhost", ".corp.example", "10.0.0.0/8", "[::1]:8080"])
    }

    @Test("HTTP_PROXY is ignored in a CGI program (REQUEST_METHOD set: httpoxy); http_proxy and HTTPS_PROXY are not")
    func httpoxy() throws {
        let cgi = try Settings(environment: [
            "REQUEST_METHOD": "GET", "HTTP_PROXY": "http://attacker.example:80", "HTTPS_PROXY": "http://corp:3128",
        ]).network
        #expect(cgi.httpProxy == nil)
        #expect(cgi.httpsProxy == "http://corp:3128")
        #expect(
            try Settings(environment: ["REQUEST_METHOD": "GET", "http_proxy": "http://corp:3128"]).network.httpProxy
                == "http://corp:3128")
    }

    @Test("a bad proxy URL stops at start naming the variable, and never prints the password")
    func badProxy() {
        let socks = failure(["HTTPS_PROXY": "socks5://user:hunter22@proxy:1080"])
        #expect(socks.hasPrefix("HTTPS_PROXY: 'socks5://REDACTED@proxy:1080' uses 'socks5'"))
        #expect(socks.contains("accepted: an http:// or https:// proxy URL"))
        let noHost = failure(["http_proxy": "http://user:hunter22@:3128"])
        #expect(noHost.hasPrefix("http_proxy: 'http://REDACTED@:3128' has no host"))
        let broken = failure(["HTTPS_PROXY": "http://user:hun/ter@22@proxy:3128"])
        #expect(broken.hasPrefix("HTTPS_PROXY: 'http://REDACTED@proxy:3128'"))
        let port = failure(["https_proxy": "http://proxy:99999"])
        #expect(port.hasPrefix("https_proxy: 'http://proxy:99999'"))
        for message in [socks, noHost, broken, port] {
            #expect(!message.contains("hunter"), "\(message)")
            #expect(!message.contains("ter@22"), "\(message)")
            #expect(message != "no error")
        }
    }

    @Test(
        "a proxy URL libcurl would not use as written is refused at start, password never printed: control characters in the user info, a path, query or fragment, a host that is no host name"
    )
    func proxyFailingOpen() throws {
        // libcurl connects directly, without a word, when the decoded user info holds a control
        // character; `user:12/abc@host` parses as host `user`, port 12 (and the path `/abc@host`).
        let cases: [(value: String, reason: String)] = [
            ("http://alice:hun%0Ater22@proxy:3128", "has a control character (such as %0A, %0D or %00)"),
            ("http://alice:hun%0Dter22@proxy:3128", "has a control character"),
            ("http://alice:hun%00ter22@proxy:3128", "has a control character"),
            ("http://alice:hun%09ter22@proxy:3128", "has a control character"),
            ("http://ali%0Ace:hunter22@proxy:3128", "has a control character"),
            ("http://alice:hun%7Fter22@proxy:3128", "has a control character"),
            ("http://alice:hun%C2%85ter22@proxy:3128", "has a control character"),
            ("http://alice:12/hunter22@proxy:3128", "has a path, query or fragment"),
            ("http://alice:12?hunter22@proxy:3128", "has a path, query or fragment"),
            ("http://alice:12#hunter22@proxy:3128", "has a path, query or fragment"),
            ("http://alice:hunter22@proxy:3128/path", "has a path, query or fragment"),
            ("http://alice:hunter22@proxy:3128/?", "has a path, query or fragment"),
            ("http://alice:hunter22@pro%2Fxy:3128", "has a host that is neither a name"),
            ("http://alice:hunter22@pro%0Axy:3128", "has a host that is neither a name"),
            ("http://alice:hunter22@b%C3%BCcher.example:3128", "has a host that is neither a name"),
        ]
        for (value, reason) in cases {
            let message = failure(["HTTPS_PROXY": value])
            #expect(message.hasPrefix("HTTPS_PROXY: '"), "\(value): \(message)")
            #expect(message.contains(reason), "\(value): \(message)")
            for secret in ["hunter", "alice", "12/", "12?", "12#"] {
                #expect(!message.contains(secret), "\(value): \(message)")
            }
        }
        // Accepted: a trailing slash, encoded reserved characters, an IPv6 address; an '@' or a
        // non-ASCII letter written as such goes to libcurl percent-encoded (libcurl cuts the user
        // info at its first '@').
        let accepted = try Settings(environment: [
            "HTTPS_PROXY": "http://al%40ice:p%2F%3F%23%25%C3%A4x@Proxy.Example:3128/",
            "HTTP_PROXY": "http://u:p@ä@[fd00::1]:8080",
        ]).network
        #expect(accepted.httpsProxy == "http://al%40ice:p%2F%3F%23%25%C3%A4x@proxy.example:3128")
        #expect(accepted.httpProxy == "http://u:p%40%C3%A4@[fd00::1]:8080")
    }

    @Test("the proxy's credentials are secrets in every form: as written, decoded, and Proxy-Authorization's base64")
    func proxySecrets() throws {
        let settings = try Settings(environment: ["HTTPS_PROXY": "http://alice:s3cr%2Ft@proxy:3128"])
        let redactor = Redactor(secrets: settings.secrets)
        let base64 = Data("alice:s3cr/t".utf8).base64EncodedString()
        let text = "s3cr/t s3cr%2Ft alice:s3cr/t Proxy-Authorization: Basic \(base64) alice"
        #expect(redactor.redact(text) == "REDACTED REDACTED REDACTED Proxy-Authorization: Basic REDACTED alice")
        // A user name without a password is a token: it is the secret then.
        let token = try Settings(environment: ["https_proxy": "http://tok_abcdef@proxy:3128"])
        #expect(Redactor(secrets: token.secrets).redact("user tok_abcdef") == "user REDACTED")
    }

    @Test("APIMACRO_CA_BUNDLE wins over SSL_CERT_FILE; a relative path or ~/ is made absolute")
    func caBundle() throws {
        let root = try folder()
        defer { try? FileManager.default.removeItem(at: root) }
        try pem.write(to: root.appendingPathComponent("own.pem"), atomically: true, encoding: .utf8)
        try pem.write(to: root.appendingPathComponent("system.pem"), atomically: true, encoding: .utf8)
        let own = root.appendingPathComponent("own.pem").path
        let system = root.appendingPathComponent("system.pem").path
        #expect(
            try Settings(environment: ["APIMACRO_CA_BUNDLE": own, "SSL_CERT_FILE": system]).network.caBundle == own)
        #expect(try Settings(environment: ["SSL_CERT_FILE": system]).network.caBundle == system)
        #expect(try Settings(environment: ["SSL_CERT_FILE": "own.pem"], workingDirectory: root).network.caBundle == own)
        #expect(
            try Settings(environment: ["APIMACRO_CA_BUNDLE": "~/system.pem", "HOME": root.path]).network.caBundle
                == system)
    }

    @Test("a CA bundle that is missing, a folder, unreadable or not PEM stops at start naming the variable")
    func badBundle() throws {
        let root = try folder()
        defer { try? FileManager.default.removeItem(at: root) }
        let missing = failure(["SSL_CERT_FILE": root.appendingPathComponent("nope.pem").path])
        #expect(
            missing.hasPrefix("SSL_CERT_FILE: '\(root.path)/nope.pem' does not exist; accepted: a readable PEM file"))
        #expect(failure(["APIMACRO_CA_BUNDLE": root.path]).hasPrefix("APIMACRO_CA_BUNDLE: '\(root.path)' is a folder"))
        let der = root.appendingPathComponent("ca.der")
        try Data([0x30, 0x82, 0x01, 0x0A]).write(to: der)
        #expect(failure(["APIMACRO_CA_BUNDLE": der.path]).contains("holds no PEM certificate"))
        let fifo = root.appendingPathComponent("fifo")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        #expect(failure(["SSL_CERT_FILE": fifo.path]).contains("is not a regular file"))
        if getuid() != 0 {
            let closed = root.appendingPathComponent("closed.pem")
            try pem.write(to: closed, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0], ofItemAtPath: closed.path)
            #expect(failure(["SSL_CERT_FILE": closed.path]).contains("cannot be read"))
        }
    }

    @Test("config.toml: https_proxy, http_proxy, no_proxy (a list joined with commas) and ca_bundle")
    func configFile() throws {
        let home = try folder()
        defer { try? FileManager.default.removeItem(at: home) }
        let bundle = home.appendingPathComponent("corp.pem")
        try pem.write(to: bundle, atomically: true, encoding: .utf8)
        try """
        https_proxy = "http://proxy.corp.example:3128"
        http_proxy = "http://plain.corp.example:3128"
        no_proxy = ["localhost", "[::1]:8080", ".corp.example"]
        ca_bundle = "\(bundle.path)"
        """.write(to: home.appendingPathComponent("config.toml"), atomically: true, encoding: .utf8)
        let network = try Settings.load(process: ["APIMACRO_HOME": home.path]).network
        #expect(network.httpsProxy == "http://proxy.corp.example:3128")
        #expect(network.httpProxy == "http://plain.corp.example:3128")
        #expect(network.noProxy == ["localhost", "[::1]:8080", ".corp.example"])
        #expect(network.caBundle == bundle.path)
        // The environment's own variable wins over the file; the standard ones do not (apimacro's setting is more specific).
        let overridden = try Settings.load(process: [
            "APIMACRO_HOME": home.path, "APIMACRO_HTTPS_PROXY": "http://env:1", "HTTP_PROXY": "http://standard:2",
        ]).network
        #expect(overridden.httpsProxy == "http://env:1")
        #expect(overridden.httpProxy == "http://plain.corp.example:3128")
        // A bad value names the file and the key.
        try "https_proxy = \"ftp://u:hunter22@x\"\n".write(
            to: home.appendingPathComponent("config.toml"), atomically: true, encoding: .utf8)
        // It holds a password: only a file others cannot read is used (issue 24).
        try FileManager.default.setAttributes(
            [.posixPermissions: 0o600], ofItemAtPath: home.appendingPathComponent("config.toml").path)
        do {
            _ = try Settings.load(process: ["APIMACRO_HOME": home.path])
            Issue.record("a bad proxy in config.toml was accepted")
        } catch {
            let message = String(describing: error)
            #expect(message.hasPrefix("\(home.path)/config.toml: https_proxy: 'ftp://REDACTED@x' uses 'ftp'"))
            #expect(!message.contains("hunter22"))
        }
    }

    @Test("a value is trimmed of spaces and tabs exactly as Foundation's trimmingCharacters(in: .whitespaces) did")
    func trimmedAsFoundation() {
        let samples = [
            "", " ", "\t", "  a  ", "\ta b\t", "\u{00A0}x\u{3000}", " \n ", "\nx\n", "http://p:8080 ", "é ",
            " \u{2003}",
        ]
        for sample in samples {
            #expect(
                NetworkResolver.trimmed(sample) == sample.trimmingCharacters(in: .whitespaces),
                "\(sample.debugDescription)")
        }
    }
}
