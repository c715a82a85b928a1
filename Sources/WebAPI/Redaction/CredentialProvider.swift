/// Where a client's credential comes from when it is not known as the client is made: read
/// when a request first needs it (another tool's token, found by running the tool), or made
/// and renewed as it expires (a GitHub App's installation token).
///
/// `APIClient.send` asks it before each request, and the answer goes into the client's
/// `CredentialSlot`, so every stage of that request (the cache key, the HAR redaction, the
/// credential on the wire) sees the same one, and the redactor knows every credential it ever
/// gave.
public protocol CredentialProvider: Sendable {
    /// The credential for a request to `url` (absolute), fetched or renewed if need be; nil
    /// for none.
    ///
    /// - Throws: `APIError` (`.auth` when the credential cannot be had).
    func credential(for url: String) async throws -> Credential?

    /// `credential(for:)`'s answer when it is known without waiting or fetching anything
    /// (`.some(nil)`: known to be none); nil when it has to be asked for. By default nil.
    func knownCredential(for url: String) -> Credential??
}

extension CredentialProvider {
    public func knownCredential(for url: String) -> Credential?? { nil }
}
