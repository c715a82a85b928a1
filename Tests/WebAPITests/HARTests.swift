import Foundation
import TestSupport
import Testing
import WebAPI

@Suite("HAR record and replay")
struct HARTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    func temporaryFile() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("apimacro-\(UUID().uuidString).har")
    }

    func client(
        _ store: ExchangeStore, baseURL: String, credential: Credential? = nil,
        log: ExchangeLog = ExchangeLog(logger: nil)
    ) -> APIClient {
        APIClient(
            configuration: ClientConfiguration(name: "test", baseURL: baseURL, credential: credential),
            transport: store,
            log: log, redactor: Redactor(secrets: []))
    }

    @Test(
        "a recording holds every exchange with credentials REDACTED; a replay with the server stopped gives the same answers in order"
    )
    func recordThenReplay() async throws {
        let file = temporaryFile()
        defer { try? FileManager.default.removeItem(at: file) }
        let token = "ghp_recordTestToken0123456789"
        var recorded: [[UInt8]] = []
        let baseURL: String
        do {
            let loop = try await Loopback.start()
            baseURL = loop.server.baseURL
            let recorder = HARRecorder(file: file, version: "test")
            let store = ExchangeStore(
                network: loop.transport, cache: nil, recorder: recorder, replay: nil, offline: false, warn: { _ in })
            let api = client(store, baseURL: baseURL, credential: .bearer(Secret(token)))
            let keyed = client(
                store, baseURL: baseURL, credential: .query(name: "key", value: Secret("AIzaQueryKey-123456")))
            recorded.append(try await api.send(Request("GET", "/cache/no-store")).body)
            recorded.append(try await api.send(Request("GET", "/cache/no-store")).body)
            recorded.append(try await keyed.send(Request("GET", "/echo/keyed", query: [("q", "x")])).body)
            recorded.append(
                try await api.send(
                    Request("POST", "/echo/post", body: .json(Array(#"{"token": "\#(token)", "n": 1}"#.utf8)))
                ).body)
            try recorder.write()
            try await loop.close()
        }
        let text = try String(contentsOf: file, encoding: .utf8)
        #expect(!text.contains(token) && !text.contains("AIzaQueryKey"), "a secret leaked into the HAR")
        #expect(text.contains("Bearer REDACTED") && text.contains("key=REDACTED"))
        let har = try HAR.read(file)
        #expect(har.log.version == "1.2" && har.log.entries.count == 4)
        #expect(har.log.entries.allSatisfy { $0.timings?.wait != nil && $0.startedDateTime != nil })

        let replay = ExchangeStore(
            network: OfflineTransport(), cache: nil, recorder: nil, replay: try HARReplay(file: file), offline: false,
            warn: { _ in })
        let log = ExchangeLog(logger: nil)
        // Another token than the recording's: credentials are not part of the match.
        let api = client(replay, baseURL: baseURL, credential: .bearer(Secret("ghp_anotherToken987654321")), log: log)
        let keyed = client(replay, baseURL: baseURL, credential: .query(name: "key", value: Secret("AIzaOtherKey-000")))
        let first = try await api.send(Request("GET", "/cache/no-store"))
        let second = try await api.send(Request("GET", "/cache/no-store"))
        #expect(first.source == .replay)
        #expect(
            [first.body, second.body] == Array(recorded[0...1]), "repeated requests are answered in recorded order")
        #expect(String(decoding: second.body, as: UTF8.self).contains("\"serial\":2"))
        #expect(try await api.send(Request("GET", "/cache/no-store")).body == recorded[1], "then the last answer again")
        let echoed = try await keyed.send(Request("GET", "/echo/keyed", query: [("q", "x")])).text
        #expect(
            echoed
                == String(decoding: recorded[2], as: UTF8.self).replacingOccurrences(
                    of: "AIzaQueryKey-123456", with: "REDACTED"))
        let post = try await api.send(
            Request("POST", "/echo/post", body: .json(Array(#"{"token": "ghp_anotherToken987654321", "n": 1}"#.utf8))))
        #expect(post.status == 200 && !post.text.contains(token))
        #expect(log.requests == 0, "a replay sends nothing")

        let missing = await apiError { _ = try await api.send(Request("GET", "/cache/not-recorded")) }
        #expect(missing?.kind == .offline)
        #expect(
            missing?.message.contains("GET \(baseURL)/cache/not-recorded is not in the replay file") == true,
            "\(String(describing: missing))")
        let otherBody = await apiError {
            _ = try await api.send(Request("POST", "/echo/post", body: .json(Array(#"{"n": 2}"#.utf8))))
        }
        #expect(otherBody?.kind == .offline, "a different body is a different request")
    }

    @Test("a HAR exported from Chrome's developer tools replays: pseudo-headers, base64 bodies, pages, _initiator")
    func browserExport() async throws {
        let file = Self.repository.appendingPathComponent("examples/cassettes/browser-chrome-octocat.har")
        let replay = try HARReplay(file: file)
        #expect(replay.count == 2)
        let store = ExchangeStore(
            network: OfflineTransport(), cache: nil, recorder: nil, replay: replay, offline: false, warn: { _ in })
        let api = client(store, baseURL: "https://api.github.com")
        let user = try await api.send(Request("GET", "/users/octocat"))
        #expect(user.status == 200 && user.text.contains("\"login\": \"octocat\""))
        #expect(user.headers["content-encoding"] == nil, "the body is stored decoded")
        #expect(user.headers[":status"] == nil && user.headers["etag"] != nil)
        let repos = try await api.send(
            Request("GET", "https://API.github.com:443/users/octocat/repos", query: [("per_page", "100")]))
        #expect(repos.text.contains("Hello-World"), "base64 content is decoded")
    }

    @Test("a file that is not a HAR is a clear error naming it")
    func notHAR() throws {
        let file = temporaryFile()
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(#"{"log": {"entries": [{"request": {"url": "https://x"}}]}}"#.utf8).write(to: file)
        #expect(throws: APIError.self) { try HARReplay(file: file) }
        do {
            _ = try HARReplay(file: file)
        } catch let error as APIError {
            #expect(
                error.message.contains(file.path) && error.message.contains("log.entries[0].request.method is missing"),
                "\(error)")
        }
    }
}
