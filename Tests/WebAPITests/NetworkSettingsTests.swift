import Testing
import WebAPI

@Suite("NetworkSettings: which proxy a request takes, NO_PROXY matching")
struct NetworkSettingsTests {
    private let proxied = NetworkSettings(httpProxy: "http://plain:3128", httpsProxy: "http://tunnel:3128")

    private func origin(_ url: String) throws -> Origin { try #require(Origin(url: url)) }

    private func bypasses(_ noProxy: [String], _ url: String) throws -> Bool {
        var settings = proxied
        settings.noProxy = noProxy
        return settings.bypassesProxy(try origin(url))
    }

    @Test("https URLs take HTTPS_PROXY, http URLs HTTP_PROXY; none or an empty one means direct")
    func choice() throws {
        #expect(proxied.proxy(for: try origin("https://api.github.com/user")) == "http://tunnel:3128")
        #expect(proxied.proxy(for: try origin("http://example.com/")) == "http://plain:3128")
        #expect(NetworkSettings(httpProxy: "http://plain:3128").proxy(for: try origin("https://api.github.com")) == nil)
        #expect(NetworkSettings(httpsProxy: "").proxy(for: try origin("https://api.github.com")) == nil)
        #expect(NetworkSettings.direct.proxy(for: try origin("http://127.0.0.1:8080")) == nil)
    }

    @Test("a name matches itself and its subdomains, with or without a leading dot, never a longer name")
    func names() throws {
        #expect(try bypasses(["github.com"], "https://github.com/"))
        #expect(try bypasses(["github.com"], "https://api.github.com/"))
        #expect(try bypasses([".github.com"], "https://api.github.com/"))
        #expect(try bypasses([".github.com"], "https://github.com/"))
        #expect(try bypasses(["*.github.com"], "https://api.github.com/"))
        #expect(try bypasses([" GitHub.COM "], "https://API.github.com/"))
        #expect(try !bypasses(["github.com"], "https://notgithub.com/"))
        #expect(try !bypasses(["github.com"], "https://github.com.evil.example/"))
        #expect(try !bypasses(["api.github.com"], "https://github.com/"))
        #expect(try bypasses(["*"], "https://anything.example/"))
        #expect(try !bypasses([], "https://anything.example/"))
        #expect(try !bypasses(["", "."], "https://anything.example/"))
    }

    @Test("a trailing dot (a fully qualified name) matches as without it")
    func trailingDot() throws {
        #expect(try bypasses(["corp.example."], "https://git.corp.example/"))
        #expect(try bypasses(["corp.example"], "https://git.corp.example./"))
    }

    @Test("host:port matches that port only; the default port counts")
    func ports() throws {
        #expect(try bypasses(["example.com:8080"], "http://example.com:8080/"))
        #expect(try !bypasses(["example.com:8080"], "http://example.com/"))
        #expect(try bypasses(["example.com:443"], "https://example.com/"))
        #expect(try !bypasses(["example.com:abc"], "https://example.com/"))
    }

    @Test("a name never matches an IP address by suffix: NO_PROXY=2.3 does not cover 10.1.2.3")
    func addressesAreNotNames() throws {
        #expect(try !bypasses(["2.3"], "http://10.1.2.3/"))
        #expect(try !bypasses(["0.1"], "http://127.0.0.1:9/"))
        #expect(try bypasses(["127.0.0.1"], "http://127.0.0.1:9/"))
        #expect(try !bypasses(["127.0.0.1"], "http://127.0.0.10:9/"))
    }

    @Test("IPv6: a bare address, a bracketed one with a port, written in another form")
    func ipv6() throws {
        #expect(try bypasses(["::1"], "http://[::1]:8080/"))
        #expect(try bypasses(["[::1]"], "http://[::1]:8080/"))
        #expect(try bypasses(["[::1]:8080"], "http://[::1]:8080/"))
        #expect(try !bypasses(["[::1]:8081"], "http://[::1]:8080/"))
        #expect(try bypasses(["0:0:0:0:0:0:0:1"], "http://[::1]:8080/"))
    }

    @Test("CIDR ranges, IPv4 and IPv6, as curl reads them")
    func cidr() throws {
        #expect(try bypasses(["10.0.0.0/8"], "http://10.200.3.4/"))
        #expect(try !bypasses(["10.0.0.0/8"], "http://11.0.0.1/"))
        #expect(try bypasses(["192.168.4.0/22"], "http://192.168.7.255/"))
        #expect(try !bypasses(["192.168.4.0/22"], "http://192.168.8.0/"))
        #expect(try bypasses(["127.0.0.0/8"], "http://127.0.0.2:9/"))
        #expect(try bypasses(["fd00::/8"], "http://[fd12::3]/"))
        #expect(try !bypasses(["fd00::/8"], "http://[fe80::1]/"))
        #expect(try !bypasses(["10.0.0.0/8"], "http://ten.example/"))
        #expect(try !bypasses(["10.0.0.0/33"], "http://10.0.0.1/"))
    }

    @Test("a bypassed origin gets no proxy; others keep theirs")
    func proxyHonoursNoProxy() throws {
        var settings = proxied
        settings.noProxy = ["localhost", "127.0.0.1", ".internal.example"]
        #expect(settings.proxy(for: try origin("http://127.0.0.1:9/")) == nil)
        #expect(settings.proxy(for: try origin("https://git.internal.example/")) == nil)
        #expect(settings.proxy(for: try origin("https://api.github.com/")) == "http://tunnel:3128")
    }
}
