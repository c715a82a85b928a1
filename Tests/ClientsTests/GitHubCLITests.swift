import Clients
import Foundation
import Testing
import WebAPI

/// The token `gh` already has: its hosts.yml, its variables, and the host rule.
@Suite("gh's tokens: hosts.yml, variables and hosts")
struct GitHubCLITests {
    @Test("hosts.yml as gh 2.40+ writes it: the host's token, else its active user's under users")
    func multiAccount() throws {
        let file = try GHHostsFile(
            parsing: """
                github.com:
                    users:
                        monalisa:
                            oauth_token: gho_monalisaToken
                        hubot:
                            oauth_token: gho_hubotToken
                    git_protocol: https
                    user: monalisa
                    oauth_token: gho_monalisaToken
                ghe.example.com:
                    users:
                        hubot:
                            oauth_token: "gho_quoted # not a comment"
                    user: hubot   # the active account
                keyring.example.com:
                    users:
                        someone: {}
                    user: someone
                    git_protocol: ssh
                """)
        #expect(file.token(for: "github.com") == "gho_monalisaToken")
        #expect(file.token(for: "ghe.example.com") == "gho_quoted # not a comment")
        #expect(file.user(for: "ghe.example.com") == "hubot")
        #expect(file.token(for: "keyring.example.com") == nil)
        #expect(file.token(for: "elsewhere.example.com") == nil)
    }

    @Test("hosts.yml as older gh wrote it, comments, quotes, a document start and CRLF")
    func olderFormat() throws {
        let file = try GHHostsFile(
            parsing:
                "---\r\n# gh\r\ngithub.com:\r\n  oauth_token: 'gho_it''s'\r\n  user: monalisa\r\n\r\n  git_protocol: https\r\n"
        )
        #expect(file.token(for: "github.com") == "gho_it's")
        #expect(try GHHostsFile(parsing: "").root == .mapping([]))
    }

    @Test(
        "anything outside the YAML gh writes makes the whole file unreadable",
        arguments: [
            "github.com:\n\toauth_token: x", "github.com:\n  - oauth_token: x", "github.com: [a, b]",
            "github.com: &anchor\n  oauth_token: x", "github.com:\n  oauth_token: |\n    x", "a: 1\n---\nb: 2",
            "github.com:\n  oauth_token: x\n  oauth_token: y", "github.com:\n    user: a\n  oauth_token: x",
            "github.com: x\n  oauth_token: y", "github.com:\n  oauth_token: \"unterminated",
            "github.com:\n  oauth_token: \"\\x41\"", "just text", "? complex key",
            String(repeating: "", count: 0)
                + (0..<20).map { String(repeating: " ", count: $0) + "k\($0):" }.joined(
                    separator: "\n"),
        ])
    func refused(text: String) {
        #expect(throws: GHHostsFile.Unreadable.self) { try GHHostsFile(parsing: text) }
    }

    @Test("the host gh names for the API's base URL")
    func hosts() {
        #expect(GitHubCLI.host(forAPI: "https://api.github.com") == "github.com")
        #expect(GitHubCLI.host(forAPI: "https://api.octocorp.ghe.com") == "octocorp.ghe.com")
        #expect(GitHubCLI.host(forAPI: "https://ghe.example.com/api/v3") == "ghe.example.com")
        #expect(GitHubCLI.host(forAPI: "http://127.0.0.1:8080") == "127.0.0.1:8080")
        #expect(GitHubCLI.isGitHubDotCom("github.com") && GitHubCLI.isGitHubDotCom("octocorp.ghe.com"))
        #expect(!GitHubCLI.isGitHubDotCom("ghe.example.com"))
    }

    @Test("the order: apimacro's variables, then gh's for the host's kind; hosts.yml and gh are left for first use")
    func order() {
        func configuration(_ environment: [String: String]) -> GitHubConfiguration {
            GitHubConfiguration(SettingsView(environment: environment))
        }
        let all = ["APIMACRO_GITHUB_TOKEN": "a", "GITHUB_TOKEN": "b", "GH_TOKEN": "c", "GH_ENTERPRISE_TOKEN": "d"]
        #expect(configuration(all).token?.revealed == "a")
        #expect(configuration(all).tokenSource == "env APIMACRO_GITHUB_TOKEN")
        #expect(configuration(all.filter { $0.key != "APIMACRO_GITHUB_TOKEN" }).token?.revealed == "b")
        let gh = configuration(["GH_TOKEN": "c", "GH_ENTERPRISE_TOKEN": "d", "GITHUB_ENTERPRISE_TOKEN": "e"])
        #expect(gh.token?.revealed == "c" && gh.tokenSource == "env GH_TOKEN" && gh.deferredLookup == nil)
        // An Enterprise host takes gh's enterprise variables, never GH_TOKEN.
        let enterprise = ["APIMACRO_GITHUB_URL": "https://ghe.example.com/api/v3", "GH_TOKEN": "c"]
        #expect(configuration(enterprise).token == nil)
        #expect(configuration(enterprise.merging(["GITHUB_ENTERPRISE_TOKEN": "e"]) { $1 }).token?.revealed == "e")
        #expect(
            configuration(enterprise.merging(["GITHUB_ENTERPRISE_TOKEN": "e", "GH_ENTERPRISE_TOKEN": "d"]) { $1 })
                .tokenSource == "env GH_ENTERPRISE_TOKEN")
        // No variable: nothing read now, the deferred sources wait for the first request.
        let none = configuration(["HOME": "/nonexistent"])
        #expect(none.token == nil && none.deferredLookup != nil)
    }

    @Test("hosts.yml is read under the owner rule: gh's 0600 and a 0644 file are read, one others may write is not")
    func ownerRule() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gh-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("hosts.yml")
        try Data("github.com:\n    oauth_token: gho_ownerRule\n".utf8).write(to: file)
        let view = SettingsView(environment: ["GH_CONFIG_DIR": folder.path])
        let source = try #require(GitHub.descriptor.credentialSources.first { $0.name == "gh: hosts.yml" })
        for mode in [0o600, 0o644] {
            #expect(chmod(file.path, mode_t(mode)) == 0)
            let lookup = source.lookUp(view)
            #expect(lookup.secret?.revealed == "gho_ownerRule" && lookup.detail == file.path)
        }
        #expect(chmod(file.path, 0o666) == 0)
        let refused = source.lookUp(view)
        #expect(refused.secret == nil)
        #expect(refused.problem?.contains("others can write to it (mode 0666)") == true)
        try Data("github.com:\n\toauth_token: x\n".utf8).write(to: file)
        #expect(chmod(file.path, 0o600) == 0)
        #expect(source.lookUp(view).problem?.contains("is not a hosts.yml apimacro reads (line 2: a tab") == true)
    }
}
