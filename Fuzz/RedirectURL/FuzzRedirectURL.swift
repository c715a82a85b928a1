import Clients
import FuzzSupport
import WebAPI

/// libFuzzer entry: any text as the address a browser was redirected to after an OAuth 2
/// implicit-grant authorize step.
///
/// Completing the login must return a token or throw an `APIError` whose message holds
/// no part of the would-be token.
@main
enum Fuzzer {
    static func main() { runFuzzer(fuzzerTestOneInput) }
}

/// libFuzzer's callback (also exported under its C name for libFuzzer's own `main`).
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt { fuzzRedirectURL(fuzzInput(data, size)) }

func fuzzRedirectURL(_ input: UnsafeBufferPointer<UInt8>) -> CInt {
    let text = String(decoding: input, as: UTF8.self)
    let flow = OAuthImplicitFlow(
        authorizeURL: "https://api.instagram.com/oauth/authorize", clientID: "client",
        redirectURI: "http://127.0.0.1:8765/callback")
    for state in [nil, "s1"] as [String?] {
        do {
            let token = try flow.complete(redirect: text, expectedState: state)
            precondition(!token.revealed.isEmpty, "an empty token was accepted")
            precondition(String(describing: token) == "REDACTED", "a token printed itself")
        } catch let error as APIError {
            _ = error.message
        } catch {
            preconditionFailure("not an APIError: \(error)")
        }
    }
    return 0
}
