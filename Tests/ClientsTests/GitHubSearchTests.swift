import Clients
import Testing
import WebAPI

@Suite("GitHub search's plan, without a server")
struct GitHubSearchTests {
    @Test("a server that counts more than 1,000 in every range cannot make a search split without end")
    func boundedSplits() {
        let plan = GitHubSearch(
            kind: .issues, query: "is:issue", sort: nil, order: nil, limit: nil, now: 1_700_000_000)
        var next: Request? = plan.first()
        var requests = 0
        var warnings: [String] = []
        while next != nil, requests < 1_000_000 {
            requests += 1
            // The probe gets a date; every other page claims 5,000 results and holds 100.
            let decision = plan.after(
                GitHubSearch.Page(
                    totalCount: 5000, incompleteResults: false, itemCount: 100, firstCreatedAt: "2023-11-14T22:13:20Z"))
            warnings += decision.warnings
            next = decision.next
        }
        #expect(next == nil, "the search ended")
        #expect(requests < 100_000, "\(requests) requests")
        // One warning: the first one-second slice still "holding" 5,000 names the cap.
        #expect(warnings.count == 1 && warnings[0].contains("stopping at 1,000"), "\(warnings)")
    }

    @Test("a split starts from the newest result's date, asked for once, not from the clock")
    func splitFromNewest() {
        func plan(now: Double) -> [String] {
            let plan = GitHubSearch(kind: .repositories, query: "stars:>1", sort: nil, order: nil, limit: nil, now: now)
            var queries = [plan.first()]
            for page in [
                GitHubSearch.Page(totalCount: 1500, incompleteResults: false, itemCount: 100),
                GitHubSearch.Page(
                    totalCount: 1500, incompleteResults: false, itemCount: 1, firstCreatedAt: "2020-01-01T00:00:00Z"),
            ] {
                if let next = plan.after(page).next { queries.append(next) }
            }
            return queries.map { request in
                request.query.map { "\($0.0)=\($0.1)" }.joined(separator: "&")
            }
        }
        let today = plan(now: 1_700_000_000)
        #expect(today.count == 3)
        #expect(today[1] == "q=stars:>1&sort=created&order=desc&per_page=1&page=1")
        #expect(today[2].hasPrefix("q=stars:>1 created:<=2013-"), "\(today[2])")
        #expect(plan(now: 1_800_000_000) == today, "the same requests a year later: a recording replays")
    }
}
