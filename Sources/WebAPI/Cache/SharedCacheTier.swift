/// The second tier of the HTTP cache: answers other apimacro processes stored in Redis
/// (`SharedCache`, with `APIMACRO_SHARED_STATE`), asked only when this process's own cache has
/// nothing.
///
/// A request's place there (`SharedCache.Slot`) is keyed by the credential it carries as the
/// client sends it, so only holders of that credential can find or open it; its failures
/// are `SharedCache`'s (a miss, never an error).
struct SharedCacheTier: Sendable {
    let cache: SharedCache
    /// The client's credential, part of every place's keys.
    private let slot: CredentialSlot
    /// Decides whether the client's credential goes with a request (the client's own origin).
    private let credentials: CredentialStage

    /// - Parameters:
    ///   - shared: the state shared through Redis.
    ///   - slot: the client's credential.
    ///   - credentials: the client's credential stage (`slot` for its base URL).
    init(shared: SharedState, slot: CredentialSlot, credentials: CredentialStage) {
        cache = SharedCache(shared: shared)
        self.slot = slot
        self.credentials = credentials
    }

    /// Where the answer to `wire` (the request as the wire carries it, whose cache key text is
    /// `keyText`) is kept.
    func place(keyText: String, wire: Exchange) -> SharedCache.Slot {
        cache.slot(keyText: keyText, material: material(wire))
    }

    /// The copy kept at `place`, if there is one and its variant fits `wire`'s headers.
    func entry(at place: SharedCache.Slot, for wire: Exchange) async -> SharedCache.Stored? {
        guard let found = await cache.load(place),
            found.variant == SharedCache.variant(found.varyNames, wire.headers, credential: place.credential)
        else { return nil }
        return found
    }

    /// Keeps `entry` (this process's form of the answer to `wire`) at `place`; with `waiting`
    /// false the write is not waited for.
    func store(_ entry: HTTPCache.Entry, wire: Exchange, at place: SharedCache.Slot, waiting: Bool = true) async {
        // Its variant keyed by the credential, not by this machine's secret.
        let stored = SharedCache.Stored(
            status: entry.status, headers: entry.headers, body: entry.body, varyNames: entry.varyNames,
            storedAt: entry.storedAt, initialAge: entry.initialAge,
            variant: SharedCache.variant(entry.varyNames, wire.headers, credential: place.credential))
        await cache.store(stored, in: place, waiting: waiting)
    }

    /// Removes the copies of `urls` an unsafe `exchange` invalidated: only this credential's GET of
    /// each URL can be found, as entries are named by it.
    func invalidate(_ urls: [String], after exchange: Exchange) async {
        for url in urls {
            var get = exchange
            get.method = "GET"
            get.url = url
            get.body = []
            let wire = credentials.wire(get)
            let text = CacheStage.keyText(for: wire, credentialHeader: CacheStage.headerName(of: slot.value))
            await cache.remove(place(keyText: text, wire: wire))
        }
    }

    /// The shared cache's credential material of a request (`SharedCredential.cacheMaterial`) as
    /// the client sends it: only what holds a secret this client knows.
    private func material(_ wire: Exchange) -> String {
        let credential = slot.value
        return SharedCredential.cacheMaterial(
            wire: wire, credential: credential, attached: credential != nil && credentials.allows(wire.url),
            known: slot.redactor)
    }
}
