import Foundation
import TestSupport
import Testing

/// libcurl never reads the environment on its own (issue 24, item 9): `NO_PROXY` does not turn
/// a configured proxy off, `SSLKEYLOGFILE` writes no TLS secrets, and, watched from inside the
/// process, libcurl gets no value for any variable it asks for.
@Suite("libcurl reads nothing from the environment", .serialized)
struct TransportEnvironmentTests {
    static let token = "ghp_envAudit0123456789abcdef"

    /// Every variable libcurl (or OpenSSL through it) is known to read, set to something that
    /// would change the run: another proxy, no proxy at all, a key log, other authorities.
    static func hostileVariables(_ space: Workspace) -> [String: String] {
        let dead = "http://127.0.0.1:9"  // the discard port: nothing answers a proxy there
        return [
            "NO_PROXY": "*", "no_proxy": "*", "ALL_PROXY": dead, "all_proxy": dead, "http_proxy": dead,
            "HTTP_PROXY": dead, "SSLKEYLOGFILE": space.url.appendingPathComponent("keys.log").path,
            "CURL_DEBUG": "all", "CURL_SSL_BACKEND": "gnutls", "CURL_HOME": space.url.path,
            "CURL_CA_BUNDLE": "/nonexistent/ca.pem", "SSL_CERT_DIR": space.url.path, "NTLMUSER": "nobody",
            "LOGNAME": "nobody", "USER": "nobody",
        ]
    }

    /// A TLS server, a recording proxy, and the variables that send GitHub calls to the server
    /// through that proxy (apimacro's own settings), trusting the test's CA.
    static func withProxiedTLS(
        _ body: (TestServer, RecordingProxy, Workspace, [String: String]) async throws -> Void
    ) async throws {
        let authority = try TestCertificateAuthority()
        defer { authority.remove() }
        let server = try await TestServer.start(tls: try authority.serverContext())
        let proxy = try await RecordingProxy.start()
        let space = try Workspace(files: [
            "fetch.py": "from apimacro import github\nprint(github.user('octocat')['login'])\n"
        ])
        defer { space.remove() }
        let settings = [
            "APIMACRO_GITHUB_URL": server.baseURL, "APIMACRO_GITHUB_TOKEN": token,
            "APIMACRO_HTTPS_PROXY": proxy.url, "APIMACRO_NO_PROXY": "example.com",
            "APIMACRO_CA_BUNDLE": authority.caFile.path,
        ]
        try await shuttingDown(server, proxy) { try await body(server, proxy, space, settings) }
    }

    @Test(
        "NO_PROXY=* leaves APIMACRO_HTTPS_PROXY on, SSLKEYLOGFILE gets no TLS secrets, ALL_PROXY and the others change nothing"
    )
    func variablesChangeNothing() async throws {
        try await Self.withProxiedTLS { server, proxy, space, settings in
            let result = try await space.run(
                "run", "--no-cache", "fetch.py",
                environment: settings.merging(Self.hostileVariables(space)) { $1 })
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout == "octocat\n")
            // Through the configured proxy (libcurl 7.88 read NO_PROXY=* and went direct).
            #expect(proxy.requests.map(\.method) == ["CONNECT"], "the configured proxy was bypassed")
            #expect(proxy.requests.first?.target == "127.0.0.1:\(server.port)")
            // No key log (libcurl 7.88 appended CLIENT_HANDSHAKE_TRAFFIC_SECRET lines there).
            let keyLog = space.url.appendingPathComponent("keys.log")
            #expect(
                !FileManager.default.fileExists(atPath: keyLog.path),
                "\((try? String(contentsOf: keyLog, encoding: .utf8)) ?? "")")
            #expect(server.requests.map(\.path) == ["/users/octocat"])
        }
    }

    @Test(
        "seen from inside the process (getenv interposed): libcurl gets no value for any variable it asks for",
        .enabled(if: GetenvWatch.compiler != nil, "needs a C compiler (cc or the Swift toolchain's clang)"))
    func libcurlGetsNoValue() async throws {
        let watch = try GetenvWatch()
        defer { watch.remove() }
        try await Self.withProxiedTLS { _, proxy, space, settings in
            var environment = settings.merging(Self.hostileVariables(space)) { $1 }
            environment["LD_PRELOAD"] = watch.library.path
            environment[GetenvWatch.logVariable] = watch.log.path
            let result = try await space.run("run", "--no-cache", "fetch.py", environment: environment)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout == "octocat\n")
            #expect(proxy.requests.map(\.method) == ["CONNECT"])
            let asked = try watch.calls()
            let byLibcurl = asked.filter { $0.library.hasPrefix("libcurl") }
            // The watch works: libcurl always asks for SSLKEYLOGFILE when it loads.
            #expect(byLibcurl.contains { $0.name == "SSLKEYLOGFILE" }, "the watch saw no call: \(asked)")
            for call in byLibcurl {
                #expect(!call.answered, "libcurl read \(call.name) from the environment")
            }
            // OpenSSL's default CA locations are never consulted (libcurl always names a CA file).
            for call in asked where ["SSL_CERT_FILE", "SSL_CERT_DIR"].contains(call.name) {
                Issue.record("\(call.library) read \(call.name)")
            }
        }
    }
}

/// A shared library that replaces `getenv` and `secure_getenv` in a child process (through
/// `LD_PRELOAD`) and writes down, for each call made from libcurl, libssl or libcrypto, the
/// library, the name and whether a value came back.
///
/// Compiled for the test with the machine's C compiler; `remove()` deletes it.
struct GetenvWatch {
    /// The variable naming the file the calls are written to.
    static let logVariable = "APIMACRO_TEST_GETENV_LOG"

    /// One `getenv` call.
    struct Call: Sendable, CustomStringConvertible {
        let library: String
        let name: String
        let answered: Bool
        var description: String { "\(library): \(name)\(answered ? " (answered)" : "")" }
    }

    /// `cc`, else `clang`, from PATH (the Swift toolchain brings clang).
    static let compiler: String? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for name in ["cc", "clang"] {
            for folder in path.split(separator: ":")
            where FileManager.default.isExecutableFile(atPath: "\(folder)/\(name)") {
                return "\(folder)/\(name)"
            }
        }
        return nil
    }()

    let folder: URL
    var library: URL { folder.appendingPathComponent("getenv-watch.so") }
    var log: URL { folder.appendingPathComponent("getenv.log") }

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("apimacro-getenv-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let source = folder.appendingPathComponent("getenv-watch.c")
        try Data(Self.source.utf8).write(to: source)
        guard let compiler = Self.compiler else { throw ProcessFailure("no C compiler (cc or clang) on PATH") }
        let errors = folder.appendingPathComponent("cc.err")
        let process = try Spawned(
            compiler, ["-shared", "-fPIC", "-O1", "-o", library.path, source.path],
            environment: ProcessInfo.processInfo.environment, stderr: .file(errors.path))
        let exit = process.waitUntilExit()
        guard exit.status == 0, !exit.signalled else {
            throw ProcessFailure(
                "\(compiler) failed (exit \(exit.status)): "
                    + ((try? String(contentsOf: errors, encoding: .utf8)) ?? ""))
        }
    }

    /// The calls written down so far.
    func calls() throws -> [Call] {
        guard FileManager.default.fileExists(atPath: log.path) else { return [] }
        return try String(contentsOf: log, encoding: .utf8).split(separator: "\n").compactMap { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.count == 3 else { return nil }
            return Call(library: String(fields[0]), name: String(fields[1]), answered: fields[2] == "1")
        }
    }

    func remove() { try? FileManager.default.removeItem(at: folder) }

    /// No stdio and no allocation: `getenv` runs early and from any thread.
    static let source = """
        #define _GNU_SOURCE
        #include <dlfcn.h>
        #include <fcntl.h>
        #include <string.h>
        #include <unistd.h>

        extern char **environ;

        static char *lookup(const char *name) {
            size_t length = strlen(name);
            for (char **entry = environ; entry != NULL && *entry != NULL; entry++) {
                if (strncmp(*entry, name, length) == 0 && (*entry)[length] == '=') return *entry + length + 1;
            }
            return NULL;
        }

        static void note(const char *name, const char *value, void *caller) {
            Dl_info info;
            if (dladdr(caller, &info) == 0 || info.dli_fname == NULL) return;
            const char *library = strrchr(info.dli_fname, '/');
            library = library != NULL ? library + 1 : info.dli_fname;
            if (strncmp(library, "libcurl", 7) != 0 && strncmp(library, "libssl", 6) != 0
                && strncmp(library, "libcrypto", 9) != 0) return;
            const char *path = lookup("\(logVariable)");
            if (path == NULL) return;
            char line[600];
            size_t used = 0;
            const char *parts[] = {library, "\\t", name, value != NULL ? "\\t1\\n" : "\\t0\\n"};
            for (int index = 0; index < 4; index++) {
                size_t length = strlen(parts[index]);
                if (used + length >= sizeof line) return;
                memcpy(line + used, parts[index], length);
                used += length;
            }
            int file = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
            if (file < 0) return;
            ssize_t written = write(file, line, used);
            (void)written;
            close(file);
        }

        char *getenv(const char *name) {
            char *value = lookup(name);
            note(name, value, __builtin_return_address(0));
            return value;
        }

        char *secure_getenv(const char *name) {
            char *value = lookup(name);
            note(name, value, __builtin_return_address(0));
            return value;
        }
        """
}
