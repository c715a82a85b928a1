import Crypto
import Foundation

/// The keys that shared state derives from the credential a request carries, so that no key
/// has to be handed from machine to machine: every holder of the credential derives the same
/// ones, and nobody else (a Redis operator included) can.
///
/// - `naming`: HMAC key for the names of shared cache entries, HKDF(material, "name").
/// - `sealing`: ChaChaPoly key for their contents, HKDF(material, "seal").
/// - `governorID`: the credential's name in the rate-limit governor's keys, a keyed hash
///   HKDF(material, "governor") applied to a constant.
///
/// A request without a credential uses a fixed material: its answers are public anyway.
struct SharedCredential: Sendable {
    let naming: SymmetricKey
    let sealing: SymmetricKey
    let governorID: String

    /// The material for anonymous requests.
    static let anonymous = "apimacro anonymous v1"

    init(material: String) {
        let input = SymmetricKey(data: Data((material.isEmpty ? SharedCredential.anonymous : material).utf8))
        let salt = Data("apimacro shared state v1".utf8)
        func derive(_ info: String) -> SymmetricKey {
            HKDF<SHA256>.deriveKey(inputKeyMaterial: input, salt: salt, info: Data(info.utf8), outputByteCount: 32)
        }
        naming = derive("name")
        sealing = derive("seal")
        let governor = derive("governor")
        governorID =
            HMAC<SHA256>.authenticationCode(for: Data("rate limit".utf8), using: governor)
            .prefix(16).hexString
    }

    /// The credential material of a request as the wire sees it: every credential-looking
    /// header (and the client credential's own header, whatever its name) and the client's
    /// query credential when it was attached.
    ///
    /// Empty for an anonymous request.
    static func material(wire: Exchange, credential: Credential?, attached: Bool) -> String {
        let own = attached ? CacheStage.headerName(of: credential)?.lowercased() : nil
        var fields: [String] = []
        for field in wire.headers {
            let name = field.name.lowercased()
            if name == own || CacheStage.isCredentialHeader(name) { fields.append("\(name): \(field.value)") }
        }
        // The client's own credential counts whether or not it is on `wire` yet: the governor
        // sits above CredentialStage, so without this every bearer, basic and header token of a
        // host shared the anonymous budget.
        if attached, let credential {
            switch credential {
            case .query(let name, let value): fields.append("query \(name)=\(value.revealed)")
            case .bearer(let token): fields.append("credential bearer \(token.revealed)")
            case .header(let name, let value): fields.append("credential \(name.lowercased()): \(value.revealed)")
            case .basic(let user, let password): fields.append("credential basic \(user):\(password.revealed)")
            }
        }
        return fields.sorted().joined(separator: "\n")
    }

    /// A keyed digest of `text` under the naming key, as hex.
    func name(_ text: String) -> String {
        HMAC<SHA256>.authenticationCode(for: Data(text.utf8), using: naming).hexString
    }

    /// `bytes` encrypted and authenticated, bound to `context` (the entry's name).
    func seal(_ bytes: [UInt8], context: String) throws -> [UInt8] {
        Array(try ChaChaPoly.seal(bytes, using: sealing, authenticating: Data(context.utf8)).combined)
    }

    /// What `seal` sealed; nil for another key, another context, or altered bytes.
    func unseal(_ sealed: [UInt8], context: String) -> [UInt8]? {
        guard let box = try? ChaChaPoly.SealedBox(combined: sealed),
            let plain = try? ChaChaPoly.open(box, using: sealing, authenticating: Data(context.utf8))
        else { return nil }
        return Array(plain)
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
