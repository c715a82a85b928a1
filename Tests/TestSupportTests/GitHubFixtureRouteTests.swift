import Foundation
import Testing

@testable import TestSupport

@Suite struct GitHubFixtureRouteTests {
    @Test func repositoryIsTheRecordedBodyVerbatim() async throws {
        try await withServer { server in
            let response = try fetch(server.baseURL + "/repos/octokit-fixture-org/hello-world")
            #expect(response.status == 200)
            // The recorded content-length: the compact body is byte for byte what GitHub sent.
            #expect(response.header("content-length") == "6496")
            #expect(response.header("last-modified") == "Tue, 10 Oct 2017 16:00:00 GMT")
            let recorded = try #require(try fixtureResponse("github/octokit-get-repository.json") as? [String: Any])
            #expect(NSDictionary(dictionary: try response.object()) == NSDictionary(dictionary: recorded))
        }
    }

    @Test func rootOrganizationSearchAndErrors() async throws {
        try await withServer { server in
            let root = try fetch(server.baseURL + "/")
            #expect(root.status == 200)
            #expect(try root.object()["current_user_url"] as? String == "https://api.github.com/user")
            let organization = try fetch(server.baseURL + "/orgs/octokit-fixture-org")
            #expect(try organization.object()["login"] as? String == "octokit-fixture-org")
            let search = try fetch(
                server.baseURL + "/search/issues?q=sesame%20repo%3Aoctokit-fixture-org%2Fsearch-issues")
            #expect(search.status == 200)
            #expect(search.header("cache-control") == "no-cache")
            #expect(try search.object()["total_count"] as? Int == 2)
            #expect(search.text.contains("😭"))
            let errors = try fetch(
                server.baseURL + "/repos/octokit-fixture-org/errors/labels", method: "POST",
                headers: [("Content-Type", "application/json")], body: Array(#"{"name":"x","color":"invalid"}"#.utf8))
            #expect(errors.status == 422)
            #expect(try errors.object()["message"] as? String == "Validation Failed")
        }
    }

    @Test func paginateIssuesFollowsTheFiveRecordedPages() async throws {
        try await withServer { server in
            var url: String? = server.baseURL + "/repos/octokit-fixture-org/paginate-issues/issues?per_page=3"
            var counts: [Int] = []
            while let next = url, counts.count < 10 {
                let response = try fetch(next)
                #expect(response.status == 200)
                counts.append(try response.array().count)
                let links = parseLinks(response.header("link"))
                for link in links.values { #expect(link.hasPrefix(server.baseURL + "/repositories/1000/issues")) }
                url = links["next"]
            }
            #expect(counts == [3, 3, 3, 3, 1])
        }
    }
}
