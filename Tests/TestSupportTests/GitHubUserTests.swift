import Foundation
import Testing

@testable import TestSupport

@Suite struct GitHubUserTests {
    static let fullUserKeys = [
        "name", "company", "blog", "location", "email", "hireable", "bio", "twitter_username", "public_repos",
        "public_gists", "followers", "following", "created_at", "updated_at",
    ]

    @Test func octocatIsAFullUserOnLoopback() async throws {
        try await withServer { server in
            let response = try fetch(server.baseURL + "/users/octocat")
            #expect(response.status == 200)
            #expect(response.header("content-type") == "application/json; charset=utf-8")
            let user = try response.object()
            #expect(user["login"] as? String == "octocat")
            #expect(user["name"] as? String == "The Octocat")
            #expect(user["company"] as? String == "@github")
            #expect(user["location"] as? String == "San Francisco")
            #expect(user["public_repos"] as? Int == 8)
            #expect(user["followers"] as? Int == 3)
            #expect(user["following"] as? Int == 2)
            #expect(user["type"] as? String == "User")
            #expect(user["url"] as? String == server.baseURL + "/users/octocat")
            #expect(user["repos_url"] as? String == server.baseURL + "/users/octocat/repos")
            #expect(user["following_url"] as? String == server.baseURL + "/users/octocat/following{/other_user}")
            #expect(!response.text.contains("api.github.com"))
            #expect(!response.text.contains("octokit-fixture-org"))
            let repository = try fixtureResponse("github/octokit-get-repository.json") as? [String: Any]
            let owner = try #require(repository?["owner"] as? [String: Any])
            for key in owner.keys { #expect(user[key] != nil, "missing owner key \(key)") }
            for key in Self.fullUserKeys { #expect(user[key] != nil, "missing full-user key \(key)") }
        }
    }

    @Test func unknownUserIsGitHubs404() async throws {
        try await withServer { server in
            let response = try fetch(server.baseURL + "/users/nobody-here")
            #expect(response.status == 404)
            #expect(
                response.text
                    == #"{"message":"Not Found","documentation_url":"https://docs.github.com/rest/users/users#get-a-user","status":"404"}"#
            )
            #expect(try fetch(server.baseURL + "/users/nobody-here/repos").status == 404)
            #expect(try fetch(server.baseURL + "/users/userx1").status == 404)
        }
    }

    @Test func generatedAndUnicodeUsers() async throws {
        try await withServer { server in
            let generated = try fetch(server.baseURL + "/users/user42").object()
            #expect(generated["name"] as? String == "User 42")
            #expect(generated["public_repos"] as? Int == 3)
            #expect(generated["followers"] as? Int == 0)
            let unicode = try fetch(server.baseURL + "/users/unicod%C3%A9").object()
            #expect(unicode["login"] as? String == "unicodé")
            #expect(unicode["name"] as? String == "Zoë 東京 😀")
            #expect(unicode["url"] as? String == server.baseURL + "/users/unicod%C3%A9")
            let many = try fetch(server.baseURL + "/users/many").object()
            #expect(many["public_repos"] as? Int == 2000)
            #expect(many["followers"] as? Int == 250)
        }
    }

    @Test func manyReposPaginateOverTwentyPages() async throws {
        try await withServer { server in
            var url: String? = server.baseURL + "/users/many/repos?per_page=100"
            var names: [String] = []
            var pages = 0
            while let next = url {
                let response = try fetch(next)
                #expect(response.status == 200)
                pages += 1
                let repos = try response.array()
                names += repos.compactMap { $0["name"] as? String }
                let links = parseLinks(response.header("link"))
                if pages == 1 {
                    #expect(
                        response.header("link")
                            == "<\(server.baseURL)/users/many/repos?per_page=100&page=2>; rel=\"next\", "
                            + "<\(server.baseURL)/users/many/repos?per_page=100&page=20>; rel=\"last\"")
                } else if pages == 2 {
                    #expect(
                        response.header("link")
                            == "<\(server.baseURL)/users/many/repos?per_page=100&page=1>; rel=\"prev\", "
                            + "<\(server.baseURL)/users/many/repos?per_page=100&page=3>; rel=\"next\", "
                            + "<\(server.baseURL)/users/many/repos?per_page=100&page=20>; rel=\"last\", "
                            + "<\(server.baseURL)/users/many/repos?per_page=100&page=1>; rel=\"first\"")
                } else if pages == 20 {
                    #expect(links["next"] == nil)
                    #expect(links["last"] == nil)
                    #expect(links["prev"] == server.baseURL + "/users/many/repos?per_page=100&page=19")
                    #expect(links["first"] == server.baseURL + "/users/many/repos?per_page=100&page=1")
                }
                url = links["next"]
                if pages > 25 { break }
            }
            #expect(pages == 20)
            #expect(names.count == 2000)
            #expect(Set(names).count == 2000)
            #expect(names.first == "repo-1")
            #expect(names.last == "repo-2000")
        }
    }

    @Test func repositoriesAreBuiltFromTheFixture() async throws {
        try await withServer { server in
            let repos = try fetch(server.baseURL + "/users/octocat/repos").array()
            #expect(repos.count == 8)
            let fifth = try #require(repos.dropFirst(4).first)
            #expect(fifth["name"] as? String == "repo-5")
            #expect(fifth["full_name"] as? String == "octocat/repo-5")
            #expect(fifth["stargazers_count"] as? Int == (5 * 7919) % 5000)
            #expect(fifth["url"] as? String == server.baseURL + "/repos/octocat/repo-5")
            #expect((fifth["owner"] as? [String: Any])?["login"] as? String == "octocat")
            #expect(fifth["organization"] == nil)
            let template = try #require(try fixtureResponse("github/octokit-get-repository.json") as? [String: Any])
            for key in template.keys where key != "organization" { #expect(fifth[key] != nil, "missing \(key)") }
            let languages = Set(repos.map { ($0["language"] as? String) ?? "null" })
            #expect(languages.count > 3)
            #expect(parseLinks(try fetch(server.baseURL + "/users/octocat/repos").header("link")).isEmpty)
        }
    }

    @Test func followersUseDefaultPageSizeAndKeepOtherParameters() async throws {
        try await withServer { server in
            let first = try fetch(server.baseURL + "/users/many/followers")
            let followers = try first.array()
            #expect(followers.count == 30)
            #expect(followers.first?["login"] as? String == "user1")
            #expect(parseLinks(first.header("link"))["last"] == server.baseURL + "/users/many/followers?page=9")
            let last = try fetch(server.baseURL + "/users/many/followers?page=9").array()
            #expect(last.count == 10)
            let custom = try fetch(server.baseURL + "/users/many/following?sort=x&per_page=50&page=2")
            #expect(try custom.array().first?["login"] as? String == "user51")
            let links = parseLinks(custom.header("link"))
            #expect(links["next"] == server.baseURL + "/users/many/following?sort=x&per_page=50&page=3")
            #expect(links["prev"] == server.baseURL + "/users/many/following?sort=x&per_page=50&page=1")
            let capped = try fetch(server.baseURL + "/users/many/followers?per_page=500").array()
            #expect(capped.count == 100)
            #expect(try fetch(server.baseURL + "/users/octocat/following").array().count == 2)
        }
    }
}
