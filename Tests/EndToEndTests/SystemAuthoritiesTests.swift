import Foundation
import TestSupport
import Testing

/// A CA bundle replaces the system's authorities, for the server and for an `https://` proxy
/// (issue 24, item 1), shown the way it failed: an authority the bundle does not hold, installed
/// in libcurl's built-in CA directory, must not be trusted.
///
/// The test never writes the machine's CA directory: each run happens in a mount namespace of
/// its own (`unshare`), where a folder holding the test's authority is mounted over the
/// directory libcurl was built to read (`LibcurlDefaults.caPath`, /etc/ssl/certs on Debian).
/// A control run without a bundle shows the folder is read there (the server is trusted through
/// it alone), so a refusal with the bundle can only come from apimacro no longer reading it.
@Suite(
    "a CA bundle replaces the system's authorities (libcurl's CA directory included)", .serialized,
    .enabled(if: MountNamespace.command != nil, "needs unshare with a mount namespace (user namespaces or root)"))
struct SystemAuthoritiesTests {
    static let macro = "from apimacro import github\nprint(github.user('octocat')['login'])\n"

    /// Two authorities, `bundled` (what APIMACRO_CA_BUNDLE names) and `system` (only in the
    /// namespace's CA directory), and that directory as a folder.
    struct Authorities {
        let bundled: TestCertificateAuthority
        let system: TestCertificateAuthority
        /// What is mounted over libcurl's CA directory: `system`'s certificate under its hash
        /// name, and, under the name of libcurl's built-in CA file when that file lives in the
        /// directory, `bundled`'s (so that file exists and never holds `system`).
        let directory: URL
        /// A bundle holding both authorities.
        let both: URL

        init() throws {
            bundled = try TestCertificateAuthority()
            system = try TestCertificateAuthority()
            directory = system.folder.appendingPathComponent("system-ca-directory")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: system.caFile, to: directory.appendingPathComponent("system-ca.pem"))
            try TestCertificateAuthority.rehash(directory)
            if let caFile = LibcurlDefaults.caFile, let caPath = LibcurlDefaults.caPath,
                URL(fileURLWithPath: caFile).deletingLastPathComponent().path == URL(fileURLWithPath: caPath).path
            {
                try FileManager.default.copyItem(
                    at: bundled.caFile,
                    to: directory.appendingPathComponent(URL(fileURLWithPath: caFile).lastPathComponent))
            }
            both = bundled.folder.appendingPathComponent("both.pem")
            try Data(
                (try String(contentsOf: bundled.caFile, encoding: .utf8))
                    .appending(try String(contentsOf: system.caFile, encoding: .utf8)).utf8
            ).write(to: both)
        }

        func remove() {
            bundled.remove()
            system.remove()
        }
    }

    /// `apimacro run --no-cache fetch.py` with `environment`, inside a mount namespace where
    /// `directory` is mounted over libcurl's built-in CA directory.
    static func run(_ space: Workspace, _ authorities: Authorities, _ environment: [String: String]) async throws
        -> RunResult
    {
        let command = try #require(MountNamespace.command)
        let caPath = try #require(LibcurlDefaults.caPath, "libcurl names no built-in CA directory")
        // sh -c SCRIPT $0 $1 ARGS...: mount $0 over $1, then run the rest.
        let script = "mount --bind \"$0\" \"$1\" && shift && exec \"$@\""
        return try await Binary.run(
            Array(command.dropFirst()) + [
                "/bin/sh", "-c", script, authorities.directory.path, caPath, Binary.url.path, "run", "--no-cache",
                "fetch.py",
            ],
            in: space.url, environment: environment, executable: URL(fileURLWithPath: command[0]))
    }

    @Test("the server: an authority only in the system's CA directory is not trusted once a bundle is set")
    func serverCertificate() async throws {
        let authorities = try Authorities()
        defer { authorities.remove() }
        // The server's certificate is signed by `system`, which only the CA directory holds.
        let server = try await TestServer.start(tls: try authorities.system.serverContext())
        let space = try Workspace(files: ["fetch.py": Self.macro])
        defer { space.remove() }
        try await shuttingDown(server) {
            let base = ["APIMACRO_GITHUB_URL": server.baseURL, "APIMACRO_GITHUB_TOKEN": "ghp_systemCA0123456789"]
            // Control: without a bundle, the system's authorities are trusted, the directory too.
            let system = try await Self.run(space, authorities, base)
            #expect(system.status == 0, "the namespace's CA directory was not read: \(system.stderr)")
            #expect(system.stdout == "octocat\n")
            // The bundle holds the other authority only: refused (libcurl 7.88 kept its CA
            // directory beside CURLOPT_CAINFO, and this run printed octocat).
            let bundled = try await Self.run(
                space, authorities, base.merging(["APIMACRO_CA_BUNDLE": authorities.bundled.caFile.path]) { $1 })
            #expect(bundled.status == 1, "\(bundled.stdout)\(bundled.stderr)")
            #expect(bundled.stdout.isEmpty)
            #expect(
                bundled.stderr.contains(
                    "the server's certificate is not signed by an authority in \(authorities.bundled.caFile.path)"),
                "\(bundled.stderr)")
            // The bundle holding the server's authority: trusted.
            let named = try await Self.run(
                space, authorities, base.merging(["SSL_CERT_FILE": authorities.system.caFile.path]) { $1 })
            #expect(named.status == 0, "\(named.stderr)")
            #expect(server.requests.filter { $0.path == "/users/octocat" }.count == 2)
        }
    }

    @Test("an https:// proxy: its certificate is checked against the bundle alone, the CA directory is not read")
    func proxyCertificate() async throws {
        let authorities = try Authorities()
        defer { authorities.remove() }
        // The server is signed by the bundled authority; the proxy by the one in the directory.
        let server = try await TestServer.start(tls: try authorities.bundled.serverContext())
        let proxy = try await RecordingProxy.start(tls: try authorities.system.serverContext())
        let space = try Workspace(files: ["fetch.py": Self.macro])
        defer { space.remove() }
        try await shuttingDown(server, proxy) {
            let base = [
                "APIMACRO_GITHUB_URL": server.baseURL, "APIMACRO_GITHUB_TOKEN": "ghp_systemCA0123456789",
                "HTTPS_PROXY": proxy.url,
            ]
            // Control: a bundle holding both authorities reaches the server through the TLS proxy.
            let both = try await Self.run(
                space, authorities, base.merging(["APIMACRO_CA_BUNDLE": authorities.both.path]) { $1 })
            #expect(both.status == 0, "\(both.stderr)")
            #expect(both.stdout == "octocat\n")
            #expect(proxy.requests.map(\.method) == ["CONNECT"])
            // Control: without a bundle, the system's authorities: the proxy is trusted through
            // the CA directory alone (the server through libcurl's CA file, see Authorities).
            let system = try await Self.run(space, authorities, base)
            #expect(system.status == 0, "the namespace's CA directory was not read: \(system.stderr)")
            #expect(proxy.requests.count == 2)
            // The bundle without the proxy's authority: the proxy is refused, nothing is tunnelled
            // (libcurl 7.88 kept its CA directory for the proxy too, and this run printed octocat).
            let bundled = try await Self.run(
                space, authorities, base.merging(["APIMACRO_CA_BUNDLE": authorities.bundled.caFile.path]) { $1 })
            #expect(bundled.status == 1, "\(bundled.stdout)\(bundled.stderr)")
            #expect(bundled.stdout.isEmpty)
            #expect(bundled.stderr.contains("certificate"), "\(bundled.stderr)")
            #expect(bundled.stderr.contains("through the proxy \(proxy.url)"), "\(bundled.stderr)")
            #expect(proxy.requests.count == 2, "a CONNECT reached a proxy whose certificate the bundle does not sign")
            #expect(server.requests.filter { $0.path == "/users/octocat" }.count == 2)
        }
    }
}

/// Runs `body`, then shuts `server` and `proxy` down, whether `body` threw or not.
func shuttingDown(
    _ server: TestServer, _ proxy: RecordingProxy? = nil, _ body: () async throws -> Void
) async throws {
    do {
        try await body()
    } catch {
        try? await proxy?.shutdown()
        try? await server.shutdown()
        throw error
    }
    try await proxy?.shutdown()
    try await server.shutdown()
}

/// How to run a command in a mount namespace of its own: `unshare` with a user namespace (any
/// user, where the kernel allows them), else, as root, a mount namespace alone.
enum MountNamespace {
    /// The `unshare` command line before the program to run, or nil when neither works here.
    static let command: [String]? = {
        let unshare = "/usr/bin/unshare"
        guard FileManager.default.isExecutableFile(atPath: unshare) else { return nil }
        var candidates = [[unshare, "--user", "--map-root-user", "--mount"]]
        if getuid() == 0 { candidates.append([unshare, "--mount"]) }
        let directory = LibcurlDefaults.caPath ?? "/tmp"
        for candidate in candidates {
            let probe = candidate + ["/bin/sh", "-c", "mount --bind \"$0\" \"$0\"", directory]
            guard let process = try? Spawned(probe[0], Array(probe.dropFirst()), environment: ["PATH": "/usr/bin:/bin"])
            else { continue }
            if process.waitUntilExit() == (status: 0, signalled: false) { return candidate }
        }
        return nil
    }()
}
