import Foundation
import Testing

@testable import WebAPI

/// The order of a client's stages, decided in one place (`Pipeline.init(client:…)`): what a plain
/// transport gets, and where an `ExchangeStore`'s recording, cache and replay go.
@Suite("the order of a client's stages")
struct PipelineOrderTests {
    /// The stages' type names, outermost first.
    static func order(_ client: APIClient) -> [String] {
        client.stages.map { String(describing: type(of: $0)) }
    }

    static func client(_ transport: any Transport) -> APIClient {
        APIClient(
            configuration: ClientConfiguration(name: "test", baseURL: "https://api.example.com"),
            transport: transport, log: ExchangeLog(logger: nil), redactor: Redactor(secrets: []))
    }

    @Test("a plain transport: status, rate limit and its memory, redirects, retries, credentials, the log")
    func plain() {
        #expect(
            Self.order(Self.client(OfflineTransport())) == [
                "StatusStage", "RateLimitStage", "RateLimitMemoryStage", "RedirectStage", "RetryStage",
                "CredentialStage", "ExchangeLogStage",
            ])
    }

    @Test("an exchange store puts recording, then the cache or the replay, above the retries")
    func store() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "apimacro-order-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let cache = try HTTPCache(
            directory: folder.appendingPathComponent("cache"),
            secret: try CacheSecret(folder: folder.appendingPathComponent("home")), maximumBytes: 1_000_000)
        let recorder = HARRecorder(file: folder.appendingPathComponent("run.har"), version: "test")
        let cached = ExchangeStore(
            network: OfflineTransport(), cache: cache, recorder: recorder, replay: nil, offline: false, warn: { _ in })
        #expect(
            Self.order(Self.client(cached)) == [
                "StatusStage", "RateLimitStage", "RateLimitMemoryStage", "DeprecationStage", "RedirectStage",
                "HARRecordStage", "CacheStage", "RetryStage", "CredentialStage", "ExchangeLogStage",
            ])
        let replay = HARReplay(har: HAR(log: HAR.Log(version: "1.2", creator: nil, entries: [])), name: "run.har")
        let replaying = ExchangeStore(
            network: OfflineTransport(), cache: cache, recorder: nil, replay: replay, offline: false, warn: { _ in })
        let client = Self.client(replaying)
        // A replay turns the cache off (it is deterministic) and lets calls through without a credential.
        #expect(
            Self.order(client) == [
                "StatusStage", "RateLimitStage", "RateLimitMemoryStage", "DeprecationStage", "RedirectStage",
                "ReplayStage", "RetryStage", "CredentialStage", "ExchangeLogStage",
            ])
        #expect(!client.needsCredentials && Self.client(cached).needsCredentials)
    }
}
