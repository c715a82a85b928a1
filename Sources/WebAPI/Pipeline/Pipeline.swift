/// Stages in order (outermost first) in front of a transport.
///
/// The chain of `Next` links is built once, here, not per request: sending an exchange
/// allocates no closures.
public struct Pipeline: Sendable {
    public let stages: [any Stage]
    public let transport: any Transport
    private let entry: Next

    public init(stages: [any Stage], transport: any Transport) {
        self.stages = stages
        self.transport = transport
        var next = Next { [transport] in try await transport.send($0) }
        for stage in stages.reversed() {
            let below = next
            next = Next { try await stage.handle($0, next: below) }
        }
        entry = next
    }

    /// Runs `exchange` through every stage, then the transport.
    public func send(_ exchange: Exchange) async throws -> Response {
        try await entry(exchange)
    }
}
