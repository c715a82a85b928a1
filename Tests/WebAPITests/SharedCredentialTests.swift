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
}
