import Platform
import _CryptoExtras

/// A JSON Web Token signed with RS256 (RFC 7519, RFC 7518 §3.3: RSASSA-PKCS1-v1_5 with
/// SHA-256), as GitHub Apps authenticate (https://docs.github.com/apps/creating-github-apps/authenticating-with-a-github-app/generating-a-json-web-token-jwt-for-a-github-app).
///
/// The RSA is swift-crypto's (`_CryptoExtras`, on BoringSSL). The key and the token are
/// secrets: neither is ever in an error message.
public enum JSONWebToken {
    /// An RSA private key read from PEM (PKCS#1 `RSA PRIVATE KEY` or PKCS#8 `PRIVATE KEY`), of
    /// at least 2,048 bits.
    public struct RSAKey: Sendable {
        let key: _RSA.Signing.PrivateKey

        /// The key in `pem`.
        ///
        /// - Throws: `APIError` (`.auth`) naming `source` (never the key) when `pem` is not an
        ///   RSA private key of 2,048 bits or more.
        public init(pem: String, source: String) throws {
            do {
                key = try _RSA.Signing.PrivateKey(pemRepresentation: pem)
            } catch {
                throw APIError(
                    .auth,
                    "\(source) is not an RSA private key of at least 2048 bits in PEM form "
                        + "(-----BEGIN RSA PRIVATE KEY----- or -----BEGIN PRIVATE KEY-----)")
            }
        }
    }

    /// `header.claims.signature`, each part base64url without padding; `claims` is the JSON
    /// object's text.
    ///
    /// - Throws: `APIError` (`.auth`) when signing fails.
    public static func rs256(claims: String, key: RSAKey) throws -> String {
        let signingInput = base64URL(Array(#"{"alg":"RS256","typ":"JWT"}"#.utf8)) + "." + base64URL(Array(claims.utf8))
        let signature: _RSA.Signing.RSASignature
        do {
            // RS256 is PKCS #1 v1.5 padding by definition (RFC 7518 §3.3); swift-crypto calls it
            // "insecure" only to steer new designs to PSS.
            signature = try key.key.signature(for: Array(signingInput.utf8), padding: .insecurePKCS1v1_5)
        } catch {
            throw APIError(.auth, "cannot sign the JSON web token with the RSA key")
        }
        return signingInput + "." + base64URL(Array(signature.rawRepresentation))
    }

    /// base64url without padding (RFC 7515 §2).
    public static func base64URL(_ bytes: [UInt8]) -> String {
        var text = Data(bytes).base64EncodedString()
        text = text.replacingLiteral("+", with: "-").replacingLiteral("/", with: "_")
        while text.hasSuffix("=") { text.removeLast() }
        return text
    }
}
