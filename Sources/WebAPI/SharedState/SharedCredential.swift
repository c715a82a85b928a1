import Crypto
import Platform
import Synchronization

/// The keys that shared state derives from the credential a request carries, so that no key
/// has to be handed from machine to machine: every holder of the credential derives the same
/// ones, and nobody else (a Redis operator included) can.
///
/// - `keys`: HKDF(material, "name") names shared cache entries (HMAC-SHA256) and
///   HKDF(material, "seal") seals their contents (ChaChaPoly), the same two operations as the
///   local cache's `CacheSecret`, from which they come.
/// - `governorID`: the credential's name in the rate-limit governor's keys, and `route(_:)`
///   the names of its routes there: keyed hashes under HKDF(material, "governor"), so a token
///   in a URL path (`/bot<TOKEN>/…`) never shows in Redis.
///
/// A request without a credential uses a fixed material for the governor; the shared cache
/// is not used for it (`isSecret` is false: anyone could compute its keys and forge entries).
final class SharedCredential: Sendable {
    let keys: CacheSecret
    let governorID: String
    /// Whether the material holds a secret an attacker cannot guess: a token, key or header
    /// credential.
    ///
    /// False for an anonymous request and for Basic auth alone (a password chosen by a person
    /// can be guessed, and the entries it names forged).
    let isSecret: Bool
    private let governor: SymmetricKey
    /// Route segments to their keyed names (a client uses a few).
    private let routes = Mutex<[String: [UInt8]]>([:])
    /// The governor's two keys for the last origin asked (a client talks to one host).
    private let lastKeys = Mutex<(origin: Origin, keys: [[UInt8]])?>(nil)

    /// The material for anonymous requests.
    static let anonymous = "apimacro anonymous v1"
    static let salt = Array("apimacro shared state v1".utf8)

    init(material: String) {
        let input = Array((material.isEmpty ? SharedCredential.anonymous : material).utf8)
        keys = CacheSecret(material: input, salt: SharedCredential.salt, naming: "name", sealing: "seal")
        governor = CacheSecret.derive(input, salt: SharedCredential.salt, info: "governor")
        governorID =
            HMAC<SHA256>.authenticationCode(for: Data("rate limit".utf8), using: governor)
            .prefix(16).hexString
        isSecret = SharedCredential.holdsSecret(material)
    }

    /// Whether `material` has a field other than Basic auth.
    static func holdsSecret(_ material: String) -> Bool {
        material.split(separator: "\n").contains { field in
            let lower = field.lowercased()
            return !lower.hasPrefix("credential basic ") && !lower.hasPrefix("authorization: basic ")
        }
    }

    /// The governor's name for the route `segment`: a keyed hash, 16 hex digits.
    func route(_ segment: String) -> [UInt8] {
        if let known = routes.withLock({ $0[segment] }) { return known }
        let name = Array(
            HMAC<SHA256>.authenticationCode(for: Data(("route\n" + segment).utf8), using: governor).prefix(8)
                .hexString.utf8)
        routes.withLock { cache in
            if cache.count >= 256 { cache.removeAll() }
            cache[segment] = name
        }
        return name
    }

    /// The secondary-limit pace's keys for `origin` and this credential, in the governor's
    /// Redis Cluster slot (`SecondaryScripts`): its state, and its content-creating sends.
    func secondaryKeys(_ origin: Origin) -> [[UInt8]] {
        let tag = "{apimacro:\(origin.scheme)://\(origin.host):\(origin.port):\(governorID)}"
        return [Array("\(tag):secondary".utf8), Array("\(tag):created".utf8)]
    }

    /// The governor's keys for `origin` and this credential (one Redis Cluster slot): its
    /// budgets and pace, and its leases.
    func governorKeys(_ origin: Origin) -> [[UInt8]] {
        if let last = lastKeys.withLock({ $0 }), last.origin == origin { return last.keys }
        let tag = "{apimacro:\(origin.scheme)://\(origin.host):\(origin.port):\(governorID)}"
        let keys = [Array("\(tag):limits".utf8), Array("\(tag):leases".utf8)]
        lastKeys.withLock { $0 = (origin, keys) }
        return keys
    }

    /// The credential material of a request as the wire sees it: every credential-looking
    /// header (and the client credential's own header, whatever its name) and the client's
    /// query credential when it was attached.
    ///
    /// Empty for an anonymous request. The rate-limit governor's identity.
    static func material(wire: Exchange, credential: Credential?, attached: Bool) -> String {
        let (headers, own) = fields(wire: wire, credential: credential, attached: attached)
        return (headers + own).sorted().joined(separator: "\n")
    }

    /// The shared cache's credential material: `material` without the header fields that hold
    /// no secret the process knows (`known`, the client's redactor: its credential, the tokens
    /// of the environment and of logins, the passwords given).
    ///
    /// A header that only looks like a credential (`X-Client-Key: public-demo`, a plugin's
    /// static header, `Cookie: consent=yes`) is public text: keys derived from it alone could be
    /// derived by a writer of Redis, who could then plant answers. So a request carrying no real
    /// secret has an empty material here, and the tier is not used for it (`isSecret`).
    static func cacheMaterial(wire: Exchange, credential: Credential?, attached: Bool, known: Redactor) -> String {
        let (headers, own) = fields(wire: wire, credential: credential, attached: attached)
        return (headers.filter { known.redact($0) != $0 } + own).sorted().joined(separator: "\n")
    }

    /// The request's credential header fields (`CacheStage.credentialFields`), and the lines of the
    /// client's own credential when it is attached.
    private static func fields(wire: Exchange, credential: Credential?, attached: Bool) -> (
        headers: [String], own: [String]
    ) {
        // The cache key's filter (one source): credential-looking headers and the client
        // credential's own header when it is attached; per call, no lock.
        let headers = CacheStage.credentialFields(
            wire.headers, own: attached ? CacheStage.headerName(of: credential) : nil)
        // The client's own credential counts whether or not it is on `wire` yet: the governor
        // sits above CredentialStage, so without this every bearer, basic and header token of a
        // host shared the anonymous budget.
        guard let own = ownLine(credential, attached: attached) else { return (headers, []) }
        return (headers, [own])
    }

    /// The material's line for the client's own credential when it is attached; nil otherwise.
    static func ownLine(_ credential: Credential?, attached: Bool) -> String? {
        guard attached, let credential else { return nil }
        switch credential {
        case .query(let name, let value): return "query \(name)=\(value.revealed)"
        case .bearer(let token): return "credential bearer \(token.revealed)"
        case .header(let name, let value): return "credential \(name.lowercased()): \(value.revealed)"
        case .basic(let user, let password): return "credential basic \(user):\(password.revealed)"
        }
    }

    /// A keyed digest of `text` under the naming key, as hex.
    func name(_ text: String) -> String {
        keys.name(text).hexString
    }

    /// `bytes` encrypted and authenticated, bound to `context` (the entry's name).
    func seal(_ bytes: [UInt8], context: String) throws -> [UInt8] {
        try keys.seal(bytes, context: Array(context.utf8))
    }

    /// What `seal` sealed; nil for another key, another context, or altered bytes.
    func unseal(_ sealed: [UInt8], context: String) -> [UInt8]? {
        keys.unseal(sealed, context: Array(context.utf8))
    }
}

extension Sequence<UInt8> {
    /// Lower-case hexadecimal digits, two per byte.
    var hexString: String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for byte in self {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
