import Foundation
import TestSupport
import Testing

/// Tokens in the system keyring (issue 41), through the binary, against a real one: Debian's
/// `gnome-keyring-daemon` on a session bus of its own (`dbus-run-session`), started by each
/// test and gone with it.
///
/// Each test writes a script that `dbus-run-session` runs: it starts the daemon (unlocked with
/// a password on its standard input), waits until the Secret Service is on the bus (`gdbus
/// wait`: an event, not a duration), then runs apimacro and `secret-tool`, printing what each
/// said after a `## STEP` line; the test reads the steps.
@Suite("the system keyring, through the binary", .serialized)
struct KeyringTests {
    static let one = "gho_kr_first_for_user1"
    static let two = "gho_kr_second_for_user2"

    /// The script's start: a keyring unlocked and ready, and the helpers the steps use.
    static func prelude(server: TestServer) -> String {
        """
        set -u
        exec 2>&1
        export APIMACRO_GITHUB_URL=\(server.baseURL)
        export APIMACRO_HOME="$PWD/home"
        step() { echo "## $1"; }
        start_keyring() {
            echo -n "$1" | gnome-keyring-daemon $2 --components=secrets --daemonize >/dev/null 2>&1
            gdbus wait --session --timeout 600 org.freedesktop.secrets
        }
        keyring_pid() {
            gdbus call --session --dest org.freedesktop.DBus --object-path /org/freedesktop/DBus \\
                --method org.freedesktop.DBus.GetConnectionUnixProcessID org.freedesktop.secrets \\
                | tr -dc '0-9 ' | awk '{print $NF}'
        }
        kept() { secret-tool lookup application apimacro client github account "$1" kind token; echo; }
        start_keyring pw --unlock

        """
    }

    /// Runs `script` under a session bus of its own (its own HOME and data folder, so the
    /// keyring files are the test's); returns its output split at the `## STEP` lines.
    static func run(_ script: String, in space: Workspace) async throws -> [String: String] {
        try space.write("steps.sh", script)
        let runtime = space.url.appendingPathComponent("runtime")
        try FileManager.default.createDirectory(
            at: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let result = try await Binary.run(
            ["--", "/bin/bash", space.url.appendingPathComponent("steps.sh").path], in: space.url,
            environment: [
                "PATH": Binary.url.deletingLastPathComponent().path + ":/usr/bin:/bin",
                "XDG_DATA_HOME": space.url.appendingPathComponent("data").path, "XDG_RUNTIME_DIR": runtime.path,
            ], executable: URL(fileURLWithPath: "/usr/bin/dbus-run-session"))
        var steps: [String: String] = [:]
        var current = ""
        // The script's stderr goes to its stdout (`exec 2>&1`), so each step's lines stay in order.
        let output = result.stdout.hasSuffix("\n") ? String(result.stdout.dropLast()) : result.stdout
        for line in output.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("## ") {
                current = String(line.dropFirst(3))
            } else if !current.isEmpty {
                steps[current, default: ""] += line + "\n"
            }
        }
        return steps
    }

    static func available() -> Bool {
        ["/usr/bin/gnome-keyring-daemon", "/usr/bin/dbus-run-session", "/usr/bin/secret-tool", "/usr/bin/gdbus"]
            .allSatisfy {
                FileManager.default.isExecutableFile(atPath: $0)
            }
    }

    static func credentials(_ space: Workspace) throws -> String {
        try String(contentsOf: space.url.appendingPathComponent("home/credentials.json"), encoding: .utf8)
    }

    @Test("login stores tokens in the keyring, the file keeping references; run reads them; logout deletes them")
    func storeReadDelete() async throws {
        try #require(Self.available(), "scripts/setup-system installs gnome-keyring, libsecret-tools and dbus")
        let server = try await TestServer.start()
        let space = try Workspace(files: [:])
        defer { space.remove() }
        let steps = try await Self.run(
            Self.prelude(server: server) + """
                step login1; echo \(Self.one) | apimacro login github --with-token
                step login2; echo \(Self.two) | apimacro login github --with-token --account work
                step file; cat home/credentials.json
                step kept; kept user1; kept work
                step run; apimacro run -c 'from apimacro import github; print(github.get("/user")["login"], github.as_account("user1").get("/user")["login"])'
                step status; apimacro auth status
                step logout; apimacro logout github --account work
                step after; kept work; kept user1
                """, in: space)
        #expect(steps["login1"]?.contains("github: token stored in the system keyring.") == true, "\(steps)")
        #expect(steps["login2"]?.contains("github: account work (user2) is the active one") == true, "\(steps)")
        let file = try #require(steps["file"])
        #expect(!file.contains(Self.one) && !file.contains(Self.two), "only references in the file: \(file)")
        #expect(file.contains("\"keyring\" : \"secret-service\""))
        #expect(steps["kept"] == "\(Self.one)\n\(Self.two)\n", "\(steps)")
        #expect(steps["run"] == "user2 user1\n", "\(steps)")
        #expect(
            steps["status"]?.contains("Tokens stored by apimacro login: in the system keyring (Secret Service)")
                == true,
            "\(steps)")
        #expect(steps["after"] == "\n\(Self.one)\n", "work's token is gone from the keyring, user1's kept: \(steps)")
        try await server.shutdown()
    }

    @Test("moving between the keyring and the file (APIMACRO_KEYRING=off, then auto) keeps every token")
    func moving() async throws {
        try #require(Self.available(), "scripts/setup-system installs gnome-keyring, libsecret-tools and dbus")
        let server = try await TestServer.start()
        let space = try Workspace(files: [:])
        defer { space.remove() }
        let steps = try await Self.run(
            Self.prelude(server: server) + """
                echo \(Self.one) | apimacro login github --with-token >/dev/null
                echo \(Self.two) | apimacro login github --with-token --account work >/dev/null
                step off; APIMACRO_KEYRING=off apimacro auth switch github user1
                step offfile; cat home/credentials.json
                step offkept; kept user1; kept work
                step offstatus; APIMACRO_KEYRING=off apimacro auth status
                step offrun; APIMACRO_KEYRING=off apimacro run --account github=work -c 'from apimacro import github; print(github.get("/user")["login"])'
                step back; apimacro auth switch github work
                step backfile; cat home/credentials.json
                step backkept; kept user1; kept work
                """, in: space)
        let offFile = try #require(steps["offfile"])
        #expect(offFile.contains(Self.one) && offFile.contains(Self.two), "both tokens moved into the file: \(steps)")
        #expect(steps["offkept"] == "\n\n", "and out of the keyring: \(steps)")
        #expect(
            steps["offstatus"]?.contains("stored in a file, not a keyring") == true
                && steps["offstatus"]?.contains("APIMACRO_KEYRING=off") == true, "\(steps)")
        #expect(steps["offrun"] == "user2\n", "\(steps)")
        let backFile = try #require(steps["backfile"])
        #expect(!backFile.contains(Self.one) && !backFile.contains(Self.two), "\(steps)")
        #expect(steps["backkept"] == "\(Self.one)\n\(Self.two)\n", "\(steps)")
        try await server.shutdown()
    }

    @Test("a locked keyring: a clear message, the fallback file or a refusal per APIMACRO_KEYRING, nothing lost")
    func locked() async throws {
        try #require(Self.available(), "scripts/setup-system installs gnome-keyring, libsecret-tools and dbus")
        let server = try await TestServer.start()
        let space = try Workspace(files: [:])
        defer { space.remove() }
        let steps = try await Self.run(
            Self.prelude(server: server) + """
                echo \(Self.one) | apimacro login github --with-token >/dev/null
                # The daemon again, its keyring on disk now locked (nobody to type the password).
                start_keyring "" --replace
                step run; apimacro run -c 'from apimacro import github; print(github.get("/user")["login"])'; echo "exit $?"
                step status; apimacro auth status
                step required; echo \(Self.two) | APIMACRO_KEYRING=required apimacro login github --with-token --account work; echo "exit $?"
                step auto; echo \(Self.two) | apimacro login github --with-token --account work; echo "exit $?"
                step file; cat home/credentials.json
                # Unlocked again: the token kept in the keyring is all there.
                start_keyring pw "--replace --unlock"
                step unlocked; apimacro run --account github=user1 -c 'from apimacro import github; print(github.get("/user")["login"])'
                """, in: space)
        let run = try #require(steps["run"])
        #expect(run.contains("is kept in the system keyring, which holds no such token, or is locked"), "\(steps)")
        #expect(run.contains("gnome-keyring-daemon --unlock") && run.contains("nothing was removed"))
        #expect(steps["status"]?.contains("is locked") == true, "\(steps)")
        let required = try #require(steps["required"])
        #expect(required.contains("APIMACRO_KEYRING=required, but the keyring would not store"), "\(steps)")
        #expect(required.contains("nothing was changed") && required.hasSuffix("exit 2\n"))
        #expect(
            steps["auto"]?.contains("stored in a file, not a keyring: the keyring would not store it") == true,
            "\(steps)")
        #expect(steps["file"]?.contains(Self.two) == true, "the fallback file holds the new token")
        #expect(steps["unlocked"] == "user1\n", "\(steps)")
        for text in steps.values { #expect(!text.contains(Self.one)) }
        try await server.shutdown()
    }

    @Test("a keyring that never answers: auto falls back to the file, required fails; neither hangs")
    func neverAnswers() async throws {
        try #require(Self.available(), "scripts/setup-system installs gnome-keyring, libsecret-tools and dbus")
        let server = try await TestServer.start()
        let space = try Workspace(files: [:])
        defer { space.remove() }
        let steps = try await Self.run(
            Self.prelude(server: server) + """
                pid=$(keyring_pid)
                kill -STOP "$pid"
                export APIMACRO_KEYRING_TIMEOUT=2
                step auto; echo \(Self.one) | apimacro login github --with-token; echo "exit $?"
                step required; echo \(Self.two) | APIMACRO_KEYRING=required apimacro login github --with-token --account work; echo "exit $?"
                kill -CONT "$pid"
                step file; cat home/credentials.json
                """, in: space)
        #expect(
            steps["auto"]?.contains(
                "stored in a file, not a keyring: the keyring would not store it: the keyring did "
                    + "not answer within 2 s (APIMACRO_KEYRING_TIMEOUT)") == true, "\(steps)")
        #expect(steps["auto"]?.hasSuffix("exit 0\n") == true)
        #expect(steps["required"]?.contains("did not answer within 2 s") == true, "\(steps)")
        #expect(steps["required"]?.hasSuffix("exit 2\n") == true)
        #expect(steps["file"]?.contains(Self.one) == true && steps["file"]?.contains(Self.two) == false)
        try await server.shutdown()
    }

    @Test("no session bus: the 0600 file, and auth status says so; required is refused")
    func noBus() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [:])
        defer { space.remove() }
        let home = space.url.appendingPathComponent("home")
        let env = ["APIMACRO_HOME": home.path, "APIMACRO_GITHUB_URL": server.baseURL]
        let login = try await space.run("login", "github", "--with-token", environment: env, stdin: Self.one + "\n")
        #expect(login.status == 0, "\(login.stderr)")
        #expect(login.stdout.contains("stored in a file, not a keyring: no D-Bus session bus"), "\(login.stdout)")
        let status = try await space.run("auth", "status", environment: env)
        #expect(
            status.stdout.contains("Tokens stored by apimacro login: stored in a file, not a keyring"),
            "\(status.stdout)")
        let required = try await space.run(
            "login", "github", "--with-token", "--account", "work",
            environment: env.merging(["APIMACRO_KEYRING": "required"]) { $1 }, stdin: Self.two + "\n")
        #expect(required.status != 0 && required.stderr.contains("APIMACRO_KEYRING=required"), "\(required.stderr)")
        #expect(!(try Self.credentials(space)).contains(Self.two), "nothing stored")
        let bad = try await space.run("auth", "status", environment: env.merging(["APIMACRO_KEYRING": "maybe"]) { $1 })
        #expect(bad.status == 2 && bad.stderr.contains("accepted: off, auto or required"), "\(bad.stderr)")
        try await server.shutdown()
    }
}
