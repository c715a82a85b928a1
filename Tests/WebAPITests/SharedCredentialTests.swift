import Testing

@testable import WebAPI

@Suite("the identity shared state keys a request by")
struct SharedCredentialTests {
    /// The governor runs above CredentialStage, so its exchange does not carry the token yet: the
    /// client's credential must still tell budgets apart (every token once shared the anonymous one).
    @Test("two tokens of one host are two identities, neither anonymous, before the header is on the wire")
    func tokensDiffer() {
        let exchange = Exchange(
            method: "GET", url: "https://api.github.com/user", headers: Headers(), body: [], timeout: 30)
        let kinds: [(Credential, Credential)] = [
            (.bearer(Secret("ghp_one")), .bearer(Secret("ghp_two"))),
            (.basic(user: "u", password: Secret("p1")), .basic(user: "u", password: Secret("p2"))),
            (.header(name: "X-Api-Key", value: Secret("k1")), .header(name: "X-Api-Key", value: Secret("k2"))),
        ]
        for (first, second) in kinds {
            let one = SharedCredential.material(wire: exchange, credential: first, attached: true)
            let two = SharedCredential.material(wire: exchange, credential: second, attached: true)
            #expect(!one.isEmpty && !two.isEmpty && one != two, "\(first)")
            // Not attached (another host): anonymous, whatever the credential.
            #expect(SharedCredential.material(wire: exchange, credential: first, attached: false).isEmpty)
        }
    }

    /// The governor keeps the last request's identity: it must be the one the request's own
    /// material gives, whatever changed since (the token, a credential header's bytes, the host).
    @Test("the governor's identity is always the request's own, the last one reused only for the same bytes")
    func governorIdentityFollowsTheRequest() throws {
        let shared = SharedState(address: SharedStateAddress(host: "127.0.0.1", port: 1), warn: { _ in })
        let slot = CredentialSlot(.bearer(Secret("ghp_firstToken")))
        let governor = GovernorStage(
            shared: shared, limits: GovernorLimits(), slot: slot, baseURL: "https://api.example.com", maxWait: 1,
            api: "github")
        let home = try #require(Origin(url: "https://api.example.com/users/x"))
        let other = try #require(Origin(url: "https://other.example.com/users/x"))
        let steps: [(Credential?, [(String, String)], Origin)] = [
            (.bearer(Secret("ghp_firstToken")), [("Accept", "x")], home),
            (.bearer(Secret("ghp_firstToken")), [("Accept", "x")], home),
            (.bearer(Secret("ghp_firstToken")), [("Cookie", "K=1")], home),
            (.bearer(Secret("ghp_firstToken")), [("Cookie", "\u{212A}=1")], home),
            (.bearer(Secret("ghp_secondToken")), [("Cookie", "\u{212A}=1")], home),
            (.bearer(Secret("ghp_secondToken")), [("Cookie", "\u{212A}=1")], other),
            (nil, [("Cookie", "\u{212A}=1")], home),
            (.bearer(Secret("ghp_firstToken")), [("Accept", "x")], home),
        ]
        var seen: [String] = []
        for (credential, headers, origin) in steps {
            slot.set(credential)
            let exchange = Exchange(
                method: "GET", url: "\(origin.scheme)://\(origin.host)/users/x", headers: Headers(headers), body: [],
                timeout: 30)
            let attached = credential != nil && origin == home
            let fresh = shared.credential(
                material: SharedCredential.material(wire: exchange, credential: credential, attached: attached))
            let kept = governor.identity(of: exchange, origin: origin)
            #expect(kept.governorID == fresh.governorID, "\(headers) on \(origin.host)")
            seen.append(kept.governorID)
        }
        #expect(seen[0] == seen[1] && seen[0] == seen[7])
        // Another host, or no token: the cookie alone, the same material both times.
        #expect(seen[5] == seen[6])
        #expect(Set(seen[2...5]).count == 4, "a changed token, header byte or host is another identity: \(seen)")
    }

    @Test("lease names are distinct within a process: a random prefix and a count")
    func leaseNames() {
        let leases = (0..<3).map { _ in GovernorStage.leaseID() }
        #expect(Set(leases).count == 3)
        #expect(leases.allSatisfy { lease in String(decoding: lease, as: UTF8.self).split(separator: "-").count == 2 })
    }
}
