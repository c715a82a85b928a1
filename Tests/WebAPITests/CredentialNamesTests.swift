import Foundation
import Testing

@testable import WebAPI

/// The one credential rule (`CredentialNames`) and the redactor that applies it to URLs and headers.
@Suite("the credential rule")
struct CredentialNamesTests {
    @Test("header names: the issue's and the cache's credential names count, ordinary headers do not")
    func headers() {
        for name in [
            "Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie", "X-Api-Key", "Api-Key", "Private-Token",
            "X-Auth-Token", "X-Session", "X-Client-Secret", "x-csrf-token", "X-Vault-Token", "X-Amz-Security-Token",
            "Ocp-Apim-Subscription-Key", "X-Hub-Signature-256", "PRIVATE-TOKEN",
        ] {
            #expect(CredentialNames.isCredentialHeader(name), "\(name)")
        }
        for name in [
            "Accept", "Accept-Language", "User-Agent", "X-GitHub-Api-Version", "Content-Type", "If-None-Match",
        ] {
            #expect(!CredentialNames.isCredentialHeader(name), "\(name)")
        }
    }

    @Test("query parameters: the issue's names and the old fixed list count; page cursors and plain words do not")
    func parameters() {
        for name in [
            "private_token", "api-key", "signature", "auth", "access_token", "key", "api_key", "apikey", "appid",
            "client_secret", "token", "oauth_token", "password", "X-Amz-Signature", "X-Amz-Credential", "sig",
            "sessionid", "jwt", "Private_Token", "private%5Ftoken",
        ] {
            #expect(Redactor(secrets: []).isSensitiveParameter(name.removingPercentEncoding ?? name), "\(name)")
        }
        for name in [
            "page", "per_page", "q", "cursor", "after", "author", "keyword", "pageToken", "next_page_token",
            "nextToken", "state", "limit",
        ] {
            #expect(!CredentialNames.isCredentialParameter(name), "\(name)")
        }
    }

    @Test("URLs: every named parameter is redacted, in the query and in a fragment, also where no URL parser reads it")
    func urls() {
        let redactor = Redactor(secrets: [])
        #expect(
            redactor.redactURL("https://h.example/x?private_token=pt1&api-key=ak2&page=3&signature=s4&auth=a5")
                == "https://h.example/x?private_token=REDACTED&api-key=REDACTED&page=3&signature=REDACTED&auth=REDACTED"
        )
        #expect(
            redactor.redactURL("http://127.0.0.1:8765/callback#access_token=tok-1&state=abc")
                == "http://127.0.0.1:8765/callback#access_token=REDACTED&state=abc")
        // A space and a `|`: URLComponents refuses this URL; the parameters are redacted all the same.
        #expect(
            redactor.redactURL("https://h.example/a b|c?x=1&private%5Ftoken=pt-9")
                == "https://h.example/a b|c?x=1&private%5Ftoken=REDACTED")
        // A client's own query credential whose name the rule does not know.
        #expect(
            Redactor(secrets: [], sensitiveParameters: ["u"]).redactURL("https://h.example/?u=me1&v=2")
                == "https://h.example/?u=REDACTED&v=2")
    }

    @Test("header values: a named header keeps only its scheme; another keeps its text, secrets redacted")
    func headerValues() {
        let redactor = Redactor(secrets: ["known-secret-1"])
        #expect(redactor.redactHeader(name: "Private-Token", value: "glpat-abc") == "REDACTED")
        #expect(redactor.redactHeader(name: "Authorization", value: "Bearer xyz") == "Bearer REDACTED")
        #expect(redactor.redactHeader(name: "X-Trace", value: "id known-secret-1") == "id REDACTED")
    }

    @Test("a redactor learns the values of an exchange's named headers and parameters, not the others")
    func exchangeCredentials() {
        let exchange = Exchange(
            method: "GET", url: "https://h.example/x?private_token=pt%2Dvalue&page=12345",
            headers: Headers([
                ("X-Auth-Token", "xat-value"), ("Authorization", "Bearer bearer-value"),
                ("Cookie", "session=cookie-value; consent=yes"), ("X-Trace", "trace-value"),
            ]), body: [], timeout: 30)
        let redactor = Redactor(secrets: []).adding(credentialsOf: exchange)
        let echoed = "pt-value xat-value bearer-value cookie-value trace-value 12345"
        #expect(redactor.redact(echoed) == "REDACTED REDACTED REDACTED REDACTED trace-value 12345")
    }
}
