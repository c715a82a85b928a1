import Foundation
import TestSupport
import Testing

/// `apimacro login`, `logout` and `auth status` as a user runs them.
@Suite("login, logout and auth status", .serialized)
struct LoginTests {
    func environment(_ server: TestServer, home: URL) -> [String: String] {
        [
            "APIMACRO_HOME": home.path, "APIMACRO_INSTAGRAM_URL": server.baseURL + "/instagram/v1",
            "APIMACRO_INSTAGRAM_CLIENT_ID": "test-client",
            "APIMACRO_INSTAGRAM_REDIRECT_URI": "http://127.0.0.1:8765/callback",
        ]
    }

    /// Why the "browser" got no answer it could read.
    struct HTTPFailure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// A tiny blocking HTTP/1.1 client for the "browser" side (raw sockets: no redirect following).
    static func http(_ method: String, _ url: String, body: String = "") throws -> (
        status: Int, headers: [String: String], body: String
    ) {
        guard let components = URLComponents(string: url), let host = components.host, let port = components.port else {
            throw URLError(.badURL)
        }
        let path =
            (components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath)
            + (components.percentEncodedQuery.map { "?" + $0 } ?? "")
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, host, &address.sin_addr)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { throw URLError(.cannotConnectToHost) }
        var request = "\(method) \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\nConnection: close\r\n"
        if !body.isEmpty {
            request += "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: \(body.utf8.count)\r\n"
        }
        request += "\r\n" + body
        let bytes = Array(request.utf8)
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw HTTPFailure("send to \(url): \(String(cString: strerror(errno)))") }
            sent += count
        }
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        var ended = "the end of the stream"
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count < 0 && errno == EINTR { continue }
            if count < 0 { ended = String(cString: strerror(errno)) }
            if count <= 0 { break }
            data.append(contentsOf: buffer[0..<count])
        }
        let text = String(decoding: data, as: UTF8.self)
        let parts = text.components(separatedBy: "\r\n\r\n")
        let head = parts.first?.components(separatedBy: "\r\n") ?? []
        // A reply without a status line is this test's failure, never the test process's crash.
        guard let status = head.first.flatMap({ $0.split(separator: " ").dropFirst().first.flatMap { Int($0) } })
        else {
            throw HTTPFailure(
                "\(method) \(url): no status line in \(data.count) bytes before \(ended): \(String(reflecting: text))")
        }
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            let pair = line.split(separator: ":", maxSplits: 1)
            if pair.count == 2 { headers[pair[0].lowercased()] = pair[1].trimmingCharacters(in: .whitespaces) }
        }
        return (status, headers, parts.dropFirst().joined(separator: "\r\n\r\n"))
    }

    /// Starts `apimacro login instagram --listen 0` with `environment` and waits for the
    /// authorize URL it prints (an event; 60 s is only a hang guard); its stdout and stderr go
    /// to files in `space`, whose URLs come back with the process.
    static func listen(_ environment: [String: String], in space: Workspace) async throws -> (
        process: Spawned, url: String, output: (stdout: URL, stderr: URL)
    ) {
        let outFile = space.url.appendingPathComponent("login-out.txt")
        let errFile = space.url.appendingPathComponent("login-err.txt")
        _ = FileManager.default.createFile(atPath: outFile.path, contents: nil)
        let process = try Spawned(
            Binary.url.path, ["login", "instagram", "--listen", "0"],
            environment: Binary.environment(environment, home: space.url), stdout: .file(outFile.path),
            stderr: .file(errFile.path))
        var authorize: String?
        for _ in 0..<600 where authorize == nil {
            try await Task.sleep(for: .milliseconds(100))
            let text = (try? String(contentsOf: outFile, encoding: .utf8)) ?? ""
            authorize = text.split(separator: "\n").first { $0.hasPrefix("http") }.map(String.init)
        }
        return (process, try #require(authorize), (outFile, errFile))
    }

    @Test(
        "a pasted key: one prompt and one store for a built-in client and a plugin; clients with no login say why")
    func pastedKeys() async throws {
        func manifest(_ name: String, _ auth: String) -> String {
            "name = \"\(name)\"\ndescription = \"\(name)\"\nbase_url = \"https://example.com\"\n\(auth)\n"
                + "[endpoints.x]\npath = \"/x\"\n"
        }
        let space = try Workspace(files: [
            "plugins/keyed/plugin.toml": manifest(
                "keyed", "auth = { kind = \"header_key\", header = \"X-Key\", env = \"KEYED_KEY\" }"),
            "plugins/basicauth/plugin.toml": manifest(
                "basicauth", "auth = { kind = \"basic\", user_env = \"BA_USER\", env = \"BA_PASSWORD\" }"),
            "plugins/open/plugin.toml": manifest("open", ""),
        ])
        defer { space.remove() }
        let home = space.url.appendingPathComponent("home")
        let file = home.appendingPathComponent("credentials.json").path
        // Bitly's identity check (whose key it is) goes to a port nothing listens on: refused at
        // once, so the key is stored as the account `default`.
        let env = [
            "APIMACRO_HOME": home.path, "APIMACRO_PLUGINS": space.url.appendingPathComponent("plugins").path,
            "APIMACRO_SHORTENER_URL": "http://127.0.0.1:9/v4",
        ]
        for (name, label, variable) in [
            ("shortener", "your Bitly access token", "APIMACRO_SHORTENER_TOKEN"),
            ("keyed", "your keyed key", "KEYED_KEY"),
        ] {
            let login = try await space.run("login", name, environment: env, stdin: "  key-of-\(name)-1234  \n")
            #expect(login.status == 0, "\(login.stderr)")
            #expect(
                login.stdout
                    == "Paste \(label) (it is stored in \(file), mode 0600; \(variable) overrides it):\n\(name): key stored "
                    + "in \(file) (mode 0600); stored in a file, not a keyring: no D-Bus session bus "
                    + "(DBUS_SESSION_BUS_ADDRESS is unset), so no keyring runs.\n"
                    + "\(name): account default is the active one.\n"
            )
        }
        let stored = try String(contentsOfFile: file, encoding: .utf8)
        #expect(stored.contains("key-of-shortener-1234") && stored.contains("key-of-keyed-1234"))
        let status = try await space.run(
            "auth", "status", environment: env.merging(["BA_USER": "amy", "BA_PASSWORD": "pw-5678"]) { $1 })
        let rows = status.stdout.split(separator: "\n").map {
            $0.split(separator: " ", omittingEmptySubsequences: true)
        }
        func row(_ name: String) -> String? {
            rows.first { $0.first.map(String.init) == name }.map { $0.dropFirst().joined(separator: " ") }
        }
        #expect(row("shortener") == "credentials from stored login (\(file))", "\(status.stdout)")
        #expect(row("keyed") == "credentials from stored login (\(file))")
        #expect(row("basicauth") == "credentials from env BA_USER, BA_PASSWORD")
        #expect(row("github") == "no credentials")
        #expect(row("open") == nil, "a plugin with no credential has no line")
        #expect(!status.stdout.contains("key-of-") && !status.stdout.contains("pw-5678"))
        for (name, message) in [
            ("basicauth", "basicauth uses HTTP basic auth: set BA_USER and BA_PASSWORD; there is nothing to log in to"),
            ("open", "open needs no credentials; there is nothing to log in to"),
        ] {
            let refused = try await space.run("login", name, environment: env, stdin: "secret-typed-9999\n")
            #expect(refused.status == 2)
            #expect(refused.stderr.contains(message), "\(refused.stderr)")
        }
        let github = try await space.run("login", "github", environment: env)
        #expect(github.stderr.contains("set APIMACRO_GITHUB_CLIENT_ID"), "\(github.stderr)")
        #expect(try String(contentsOfFile: file, encoding: .utf8) == stored, "a refused login stores nothing")
        let logout = try await space.run("logout", "keyed", environment: env)
        #expect(logout.stdout == "keyed: logged out (stored token removed).\n")
    }

    @Test("login --listen: the test plays the browser; the token is stored 0600 and used by a macro")
    func listenFlow() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "me.py": "from apimacro import instagram\nprint(instagram.logged_in, instagram.me()['username'])\n"
        ])
        defer { space.remove() }
        let home = space.url.appendingPathComponent("home")
        let (process, url, _) = try await Self.listen(environment(server, home: home), in: space)
        #expect(url.contains("response_type=token") && url.contains("client_id=test-client"))
        // The "browser": the provider redirects with the token in the fragment…
        let provider = try await runBlocking { try Self.http("GET", url) }
        #expect(provider.status == 302)
        let location = try #require(provider.headers["location"])
        let fragment = try #require(location.split(separator: "#", maxSplits: 1).last.map(String.init))
        let callback = String(location.split(separator: "#")[0])
        // …the callback page is loaded (its script would post the fragment)…
        let page = try await runBlocking { try Self.http("GET", callback) }
        #expect(page.status == 200 && page.body.contains("location.hash"))
        // …and the fragment is posted back.
        let origin = callback.components(separatedBy: "/callback")[0]
        let encoded = fragment.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? fragment
        let posted = try await runBlocking {
            try Self.http("POST", origin + "/token", body: "fragment=\(encoded)&query=")
        }
        #expect(posted.status == 200)
        let exit = await process.exit()
        #expect(exit.status == 0 && !exit.signalled)
        let store = home.appendingPathComponent("credentials.json")
        let mode = try FileManager.default.attributesOfItem(atPath: store.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let macro = try await space.run("run", "me.py", environment: environment(server, home: home))
        #expect(macro.stdout == "True shayne\n", "\(macro.stderr)")
        let status = try await space.run("auth", "status", environment: environment(server, home: home))
        let rows = status.stdout.split(separator: "\n").map(String.init)
        #expect(
            rows.contains { $0.hasPrefix("instagram ") && $0.contains(" credentials from stored login") },
            "\(status.stdout)")
        #expect(rows.contains { $0.hasPrefix("github ") && $0.hasSuffix(" no credentials") }, "\(status.stdout)")
        // The second column lines up, however long a plugin's name (openweather) is (the line
        // saying where stored tokens are is no client's row).
        #expect(rows.last?.hasPrefix("Tokens stored by apimacro login: stored in a file, not a keyring") == true)
        let columns = Set(
            rows.filter { !$0.hasPrefix("Tokens stored by") }.map { row in
                row.range(of: #"  \S"#, options: .regularExpression).map {
                    row.distance(from: row.startIndex, to: $0.lowerBound)
                } ?? -1
            })
        #expect(columns.count == 1 && rows.count > 3, "\(status.stdout)")
        #expect(!status.stdout.contains("ig-token-1"))
        let logout = try await space.run("logout", "instagram", environment: environment(server, home: home))
        #expect(logout.stdout == "instagram: logged out (stored token removed).\n")
        let after = try await space.run("run", "me.py", environment: environment(server, home: home))
        #expect(after.status == 1)
        #expect(after.stderr.contains("apimacro.AuthError: instagram needs a login"))
        try await server.shutdown()
    }

    @Test("login then --redirect-url completes the paste flow; a state mismatch and access_denied are refused")
    func pasteFlow() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        let home = space.url.appendingPathComponent("home")
        let env = environment(server, home: home)
        let start = try await space.run("login", "instagram", environment: env)
        #expect(start.status == 1, "nothing pasted: not logged in yet (issue 36)")
        let url = try #require(start.stdout.split(separator: "\n").first { $0.hasPrefix("http") }.map(String.init))
        let state = try #require(URLComponents(string: url)?.queryItems?.first { $0.name == "state" }?.value)
        let wrong = try await space.run(
            "login", "instagram", "--redirect-url",
            "http://127.0.0.1:8765/callback#access_token=ig-token-1&state=forged", environment: env)
        #expect(wrong.status == 2)
        #expect(wrong.stderr.contains("state mismatch"))
        _ = try await space.run("login", "instagram", environment: env)
        let denied = try await space.run(
            "login", "instagram", "--redirect-url",
            "http://127.0.0.1:8765/callback?error=access_denied&error_reason=user_denied&error_description=The+user+denied+your+request.",
            environment: env)
        #expect(denied.status == 2)
        #expect(denied.stderr.contains("access_denied"))
        let again = try await space.run("login", "instagram", environment: env)
        let newState = try #require(
            again.stdout.split(separator: "\n").first { $0.hasPrefix("http") }.flatMap {
                URLComponents(string: String($0))?.queryItems?.first { $0.name == "state" }?.value
            })
        #expect(newState != state)
        let done = try await space.run(
            "login", "instagram", "--redirect-url",
            "http://127.0.0.1:8765/callback#access_token=ig-token-1&state=\(newState)", environment: env)
        #expect(done.status == 0, "\(done.stderr)")
        #expect(done.stdout.contains("instagram: logged in"))
        try await server.shutdown()
    }

    @Test("a provider's refusal carrying a token that decodes with a NUL is refused, not a crash")
    func refusalWithNULToken() async throws {
        // Foundation's search ended the process (SIGILL) on redacting "…abc" against "abc\0"
        // (found by the RedirectURL fuzzer); the provider chooses the address it redirects to.
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        let env = environment(server, home: space.url.appendingPathComponent("home"))
        _ = try await space.run("login", "instagram", environment: env)
        let refused = try await space.run(
            "login", "instagram", "--redirect-url",
            "http://127.0.0.1:8765/callback?error=access_d%C3%A9nied_abc#access_token=abc%00", environment: env)
        try await server.shutdown()
        #expect(refused.status == 2, "\(refused.stderr)")
        #expect(refused.stderr == "apimacro: login refused by the provider: access_d\u{e9}nied_abc\n")
    }

    @Test("--redirect-url with no pending login, or an expired one, is refused and stores nothing (issue 18, item 7)")
    func redirectWithoutPendingLogin() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        let home = space.url.appendingPathComponent("home")
        let env = environment(server, home: home)
        let attack = "http://127.0.0.1:8765/callback#access_token=ATTACKER-token-7&state=forged"
        let none = try await space.run("login", "instagram", "--redirect-url", attack, environment: env)
        #expect(none.status != 0)
        #expect(none.stderr.contains("no instagram login is pending"), "\(none.stderr)")
        #expect(none.stderr.contains("apimacro login instagram"))
        #expect(!FileManager.default.fileExists(atPath: home.appendingPathComponent("credentials.json").path))

        // A pending login saved 16 minutes ago, with the very state the redirect carries.
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        let pending = home.appendingPathComponent("pending-login-instagram")
        let old = Int(Date().timeIntervalSince1970) - 16 * 60
        try Data("\(old)\nforged".utf8).write(to: pending)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: pending.path)
        let expired = try await space.run("login", "instagram", "--redirect-url", attack, environment: env)
        #expect(expired.status != 0)
        #expect(expired.stderr.contains("no instagram login is pending"), "\(expired.stderr)")
        #expect(!FileManager.default.fileExists(atPath: home.appendingPathComponent("credentials.json").path))
        #expect(!(none.stdout + none.stderr + expired.stdout + expired.stderr).contains("ATTACKER-token-7"))
        try await server.shutdown()
    }

    @Test("a token file others can read is refused with the chmod to run")
    func insecureTokenFile() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: ["me.py": "from apimacro import instagram\ninstagram.me()\n"])
        defer { space.remove() }
        let home = space.url.appendingPathComponent("home")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        let store = home.appendingPathComponent("credentials.json")
        try Data(#"{"instagram": {"token": "ig-token-1", "kind": "access_token", "obtained_at": 0}}"#.utf8).write(
            to: store)
        try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: store.path)
        let result = try await space.run("run", "me.py", environment: environment(server, home: home))
        #expect(result.status == 1)
        #expect(result.stderr.contains("chmod 600"), "\(result.stderr)")
        #expect(!result.stderr.contains("ig-token-1"))
        let status = try await space.run("auth", "status", environment: environment(server, home: home))
        #expect(status.stdout.contains("chmod 600"))
        try await server.shutdown()
    }
}
