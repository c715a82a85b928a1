import Platform

/// One entry of `NO_PROXY`, read as curl reads it: `*` (every host), a host name (which also
/// matches its subdomains; a leading `.` or `*.` changes nothing), an IP address, an IP range
/// in CIDR form (`10.0.0.0/8`, `fd00::/8`), each optionally with `:port` (`[::1]:8080` for
/// IPv6).
///
/// Names and addresses never match each other: `2.3` does not match `10.1.2.3`.
struct NoProxyEntry: Sendable, Equatable {
    enum Target: Sendable, Equatable {
        case everything
        case domain(String)
        /// An address (4 or 16 bytes) and how many leading bits must match.
        case network([UInt8], prefixLength: Int)
    }

    let target: Target
    /// The port this entry is limited to, if any.
    let port: Int?

    /// Nil for an entry that names nothing (empty, or unreadable such as `host:abc`).
    init?(_ raw: String) {
        var text = raw.trimmingWhitespace().lowercased()
        if text.isEmpty { return nil }
        if text == "*" {
            target = .everything
            port = nil
            return
        }
        var port: Int?
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            // `[v6]` or `[v6]:port`.
            let rest = text[text.index(after: close)...]
            if rest.hasPrefix(":") {
                guard let number = Int(rest.dropFirst()) else { return nil }
                port = number
            } else if !rest.isEmpty, !rest.hasPrefix("/") {
                return nil
            }
            text = String(text[text.index(after: text.startIndex)..<close]) + (rest.hasPrefix("/") ? String(rest) : "")
        } else if text.filter({ $0 == ":" }).count == 1, let colon = text.lastIndex(of: ":") {
            // `host:port` (an IPv6 literal has several colons, and no port unless bracketed).
            guard let number = Int(text[text.index(after: colon)...]) else { return nil }
            port = number
            text = String(text[..<colon])
        }
        self.port = port
        if let slash = text.firstIndex(of: "/") {
            guard let bytes = NoProxyEntry.address(String(text[..<slash])),
                let bits = Int(text[text.index(after: slash)...]), (0...bytes.count * 8).contains(bits)
            else { return nil }
            target = .network(bytes, prefixLength: bits)
            return
        }
        if let bytes = NoProxyEntry.address(text) {
            target = .network(bytes, prefixLength: bytes.count * 8)
            return
        }
        if text.hasPrefix("*.") { text.removeFirst(2) }
        while text.hasPrefix(".") { text.removeFirst() }
        while text.hasSuffix(".") { text.removeLast() }
        if text.isEmpty { return nil }
        target = .domain(text)
    }

    /// A request's host as every entry compares it, worked out once per request (not once
    /// per entry): without brackets and trailing dots, lower-case, and its address if it is one.
    struct Host {
        let name: String
        let address: [UInt8]?

        init(_ raw: String) {
            var bare = Substring(raw)
            while bare.first == "[" || bare.first == "]" { bare.removeFirst() }
            while bare.last == "[" || bare.last == "]" { bare.removeLast() }
            var name = bare.lowercased()
            while name.hasSuffix(".") { name.removeLast() }
            self.name = name
            address = NoProxyEntry.address(name)
        }
    }

    /// Whether a request to `host` (lower-case, IPv6 in brackets or not) on `port` goes direct.
    func matches(host rawHost: String, port requestPort: Int) -> Bool {
        matches(Host(rawHost), port: requestPort)
    }

    /// `matches(host:port:)` for a host already worked out.
    func matches(_ host: Host, port requestPort: Int) -> Bool {
        if let port, port != requestPort { return false }
        switch target {
        case .everything:
            return true
        case .domain(let name):
            // A name never matches an address (no suffix match of `2.3` against `10.1.2.3`).
            guard host.address == nil else { return false }
            return host.name == name || host.name.hasSuffix("." + name)
        case .network(let network, let bits):
            guard let address = host.address, address.count == network.count else { return false }
            let whole = bits / 8
            if address.prefix(whole) != network.prefix(whole) { return false }
            let rest = bits % 8
            if rest == 0 { return true }
            let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - rest))
            return address[whole] & mask == network[whole] & mask
        }
    }

    /// The bytes of an IPv4 (4) or IPv6 (16) address in text form; nil for anything else.
    static func address(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if text.withCString({ inet_pton(AF_INET, $0, &v4) }) == 1 {
            return withUnsafeBytes(of: &v4) { Array($0) }
        }
        var v6 = in6_addr()
        // A zone (`fe80::1%eth0`) is not part of the address.
        let bare = text.split(separator: "%", maxSplits: 1).first.map(String.init) ?? text
        if bare.withCString({ inet_pton(AF_INET6, $0, &v6) }) == 1 {
            return withUnsafeBytes(of: &v6) { Array($0) }
        }
        return nil
    }
}
