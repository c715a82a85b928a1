import Platform

/// `Authorization: Basic …`.
public enum BasicAuthorization {
    public static func header(user: String, password: String) -> String {
        "Basic " + encoded(user: user, password: password)
    }

    /// The base64 of `user:password`, as the header carries it.
    static func encoded(user: String, password: String) -> String {
        Data("\(user):\(password)".utf8).base64EncodedString()
    }

    /// What a redactor must know to keep these credentials out of output: the password and
    /// the base64 the header carries (with and without its `=` padding, and in its URL-safe
    /// alphabet, as a server may echo it back in any of these).
    public static func wireForms(user: String, password: String) -> [String] {
        let standard = encoded(user: user, password: password)
        let unpadded = String(standard.reversed().drop { $0 == "=" }.reversed())
        let urlSafe = unpadded.replacingLiteral("+", with: "-").replacingLiteral("/", with: "_")
        return Array(Set([password, standard, unpadded, urlSafe]))
    }
}
