import Clients
import Foundation
import Testing
import WebAPI

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A fresh folder under the system's temporary directory, deleted afterwards.
func withTemporaryFolder(_ body: (URL) throws -> Void) throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("apimacro-test-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    try body(folder)
}

/// The permission bits of the file at `url`.
func mode(of url: URL) throws -> Int {
    try #require(FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int)
}

@Suite("the credential store", .serialized)
struct CredentialStoreTests {
    let token = "IGQVJ-secret-token-0123456789"

    @Test("save, read, list and remove round-trip, keeping the other entries")
    func roundTrip() throws {
        try withTemporaryFolder { folder in
            let home = folder.appendingPathComponent("home")
            let store = CredentialStore(home: home)
            #expect(try store.token(for: "instagram") == nil)
            #expect(try store.names().isEmpty)
            try store.save(Secret(token), for: "instagram", kind: "access_token", scope: "basic")
            try store.save(Secret("sk-api-key-42"), for: "shortener", kind: "api_key")
            #expect(try store.token(for: "instagram")?.revealed == token)
            #expect(try store.names() == ["instagram", "shortener"])
            let entry = try #require(try store.entry(for: "instagram"))
            #expect(entry.kind == "access_token" && entry.scope == "basic")
            #expect(abs(entry.obtainedAt - Int(Date().timeIntervalSince1970)) < 60)
            try store.save(Secret("replaced-token"), for: "instagram", kind: "access_token")
            #expect(try store.token(for: "instagram")?.revealed == "replaced-token")
            #expect(try store.remove("instagram"))
            #expect(try !store.remove("instagram"))
            #expect(try store.names() == ["shortener"])
            #expect(store.path == home.appendingPathComponent("credentials.json"))
        }
    }

    /// The modes are asked for exactly (open and mkdir with 0600 and 0700, then fchmod and chmod).
    ///
    /// They are never left to the umask: a wider request (0666, 0777) would show here under any umask.
    /// The test does not set `umask(0)` itself: the umask is the process's, and the suites run in
    /// parallel, so every folder another test made meanwhile was world-writable, which the rule
    /// for `APIMACRO_HOME` and `config.toml` (issue 24) rightly refuses.
    @Test("the file is 0600 and the folder 0700")
    func permissions() throws {
        try withTemporaryFolder { folder in
            let store = CredentialStore(home: folder.appendingPathComponent("a/b"))
            try store.save(Secret(token), for: "instagram", kind: "access_token")
            #expect(try mode(of: store.path) == 0o600)
            #expect(try mode(of: store.home) == 0o700)
            try store.save(Secret(token), for: "github", kind: "access_token")
            #expect(try mode(of: store.path) == 0o600)
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: store.home.path)
            #expect(leftovers == ["credentials.json"])
        }
    }

    @Test("a file others can read is refused with the chmod hint")
    func refusesOpenFile() throws {
        try withTemporaryFolder { folder in
            let store = CredentialStore(home: folder)
            try store.save(Secret(token), for: "instagram", kind: "access_token")
            #expect(chmod(store.path.path, 0o644) == 0)
            let error = try #require(throws: APIError.self) { try store.token(for: "instagram") }
            #expect(error.kind == .auth)
            #expect(error.message.contains("refusing to read \(store.path.path)"))
            #expect(error.message.contains("(mode 0644)"))
            #expect(error.message.contains("chmod 600 \(store.path.path)"))
            #expect(!error.message.contains(token))
            #expect(throws: APIError.self) { try store.save(Secret("x-token"), for: "github", kind: "access_token") }
            #expect(chmod(store.path.path, 0o600) == 0)
            #expect(try store.token(for: "instagram")?.revealed == token)
        }
    }

    /// Issue 24: the owner is part of the one rule (`SecureFile.exposure`) config.toml shares.
    @Test("a file another user owns is refused, even at 0600")
    func refusesAnotherUsersFile() throws {
        try withTemporaryFolder { folder in
            let store = CredentialStore(home: folder)
            try store.save(Secret(token), for: "instagram", kind: "access_token")
            #expect(chown(store.path.path, 65_534, 65_534) == 0)
            let error = try #require(throws: APIError.self) { try store.token(for: "instagram") }
            #expect(
                error.message.contains("refusing to read \(store.path.path): it belongs to another user (uid 65534)"))
            #expect(!error.message.contains(token))
            #expect(chown(store.path.path, getuid(), getgid()) == 0)
            #expect(try store.token(for: "instagram")?.revealed == token)
        }
    }

    @Test("a corrupt file is an auth error naming the file, never its contents")
    func corruptFile() throws {
        try withTemporaryFolder { folder in
            let store = CredentialStore(home: folder)
            try store.save(Secret(token), for: "instagram", kind: "access_token")
            try Data("{\"instagram\": {\"token\": \"\(token)\"".utf8).write(to: store.path)
            #expect(chmod(store.path.path, 0o600) == 0)
            let error = try #require(throws: APIError.self) { try store.token(for: "instagram") }
            #expect(error.kind == .auth)
            #expect(error.message.contains(store.path.path) && error.message.contains("move it aside"))
            #expect(!error.message.contains(token) && !String(describing: error).contains(token))
            // logout refuses with the same error and leaves the file (everyone's tokens) alone (issue 18, item 11).
            let refused = try #require(throws: APIError.self) { try store.remove("instagram") }
            #expect(refused.message == error.message)
            #expect(FileManager.default.fileExists(atPath: store.path.path))
        }
    }

    @Test("a FIFO or a device as credentials.json is refused at once, never opened blocking (issue 18, item 11)")
    func notARegularFile() throws {
        try withTemporaryFolder { folder in
            let store = CredentialStore(home: folder)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            #expect(mkfifo(store.path.path, 0o600) == 0)
            // Before the fix this open blocked forever (no writer): the test would hang, then be killed.
            let error = try #require(throws: APIError.self) { try store.token(for: "instagram") }
            #expect(
                error.kind == .auth && error.message.contains("not a regular file")
                    && error.message.contains(store.path.path))
            #expect(throws: APIError.self) { try store.remove("instagram") }
            #expect(unlink(store.path.path) == 0)
            #expect(symlink("/dev/zero", store.path.path) == 0)
            #expect(throws: APIError.self) { try store.token(for: "instagram") }
        }
    }

    @Test("a corrupt entry names itself and can be logged out")
    func corruptEntry() throws {
        try withTemporaryFolder { folder in
            let store = CredentialStore(home: folder)
            try store.save(Secret(token), for: "github", kind: "access_token")
            try Data("{\"github\": {\"token\": \"\(token)\"}, \"instagram\": 7}".utf8).write(to: store.path)
            #expect(chmod(store.path.path, 0o600) == 0)
            let error = try #require(throws: APIError.self) { try store.token(for: "instagram") }
            #expect(error.kind == .auth && error.message.contains("apimacro logout instagram"))
            #expect(try store.remove("instagram"))
            #expect(try store.token(for: "github")?.revealed == token)
        }
    }

    @Test("tokens never appear in descriptions")
    func descriptions() throws {
        try withTemporaryFolder { folder in
            let store = CredentialStore(home: folder)
            try store.save(Secret(token), for: "instagram", kind: "access_token")
            let secret = try #require(try store.token(for: "instagram"))
            let entry = try #require(try store.entry(for: "instagram"))
            for text in [String(describing: store), String(describing: secret), "\(secret)", String(describing: entry)]
            {
                #expect(!text.contains(token))
            }
        }
    }

    @Test("an absurd token is refused, and no write makes the file larger than what is read: nothing locked out")
    func noLockOut() throws {
        try withTemporaryFolder { folder in
            let store = CredentialStore(home: folder.appendingPathComponent("home"))
            try store.save(Secret("sk-api-key-42"), for: "shortener", kind: "api_key")
            let huge = String(repeating: "Huge", count: 3 << 17)
            #expect(throws: APIError.self) { try store.save(Secret(huge), for: "instagram", kind: "access_token") }
            #expect(try store.names() == ["shortener"])
            // Tokens each under the bound, together past the 1 MiB the store reads: the write that
            // would cross it is refused, and every login stays readable.
            let large = String(repeating: "t", count: CredentialStore.tokenLimit)
            var refused = false
            for index in 0..<80 where !refused {
                do {
                    try store.save(Secret(large), for: "plugin\(index)", kind: "api_key")
                } catch let error as APIError {
                    refused = true
                    #expect(error.message.contains("nothing was changed"), "\(error.message)")
                }
            }
            #expect(refused)
            #expect(try store.token(for: "shortener")?.revealed == "sk-api-key-42")
            #expect(try store.remove("shortener"))
        }
    }
}
