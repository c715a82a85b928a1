import Testing
import WebAPI

/// The loop check every paginator shares, without I/O: which spellings of a URL are one page,
/// which are not, cursors, and what 100,000 pages cost.
@Suite("PageHistory: a page asked for twice in one iteration")
struct PageHistoryTests {
    static let base = "https://api.example.com/items/list?page=2&per_page=100"

    /// Other spellings of `base` (the same page), then URLs a server answers differently.
    static let spellings = [
        "https://api.example.com/items/list?page=2&per_page=100",
        "https://api.example.com/items/list?page=2&per_page=100#",
        "https://api.example.com/items/list?page=2&per_page=100#next",
        "https://api.example.com/items/list?per_page=100&page=2",
        "https://api.example.com/items/list?page=2&&per_page=100&",
        "https://api.example.com/items/list?page=2&per_page=100&page=2",
        "HTTPS://API.Example.COM/items/list?page=2&per_page=100",
        "https://api.example.com:443/items/list?page=2&per_page=100",
        "https://api.example.com/items/./list?page=2&per_page=100",
        "https://api.example.com/items/x/../list?page=2&per_page=100",
        "https://api.example.com/%69tems/list?p%61ge=%32&per_page=100",
    ]
    static let otherPages = [
        "https://api.example.com/items/list?page=3&per_page=100",
        "https://api.example.com/items/list?page=2",
        "https://api.example.com/items/List?page=2&per_page=100",
        "https://api.example.com/items/list/?page=2&per_page=100",
        "https://api.example.com:8443/items/list?page=2&per_page=100",
        "http://api.example.com/items/list?page=2&per_page=100",
        "https://other.example.com/items/list?page=2&per_page=100",
        "https://api.example.com/items%2Flist?page=2&per_page=100",
        "https://api.example.com/items/list?page=2&per_page=100&q=a+b",
        "https://user@api.example.com/items/list?page=2&per_page=100",
    ]

    @Test(
        "spellings of one request are one page; URLs a server answers differently are other pages",
        arguments: spellings.map { ($0, true) } + otherPages.map { ($0, false) })
    func samePage(url: String, same: Bool) {
        var history = PageHistory()
        let first = history.insert(url: Self.base)
        let second = history.insert(url: url)
        #expect(first)
        #expect(second != same, "\(url) against \(Self.base)")
        #expect(history.count == (same ? 1 : 2))
    }

    @Test("the normal form: what a reader of an error sees is close to what was sent")
    func normalForm() {
        #expect(
            PageHistory.normalized("HTTP://Example.com:80?b=2&a=1#frag") == "http://example.com/?a=1&b=2")
        #expect(PageHistory.normalized("https://h/a/b/../../../c/./d/.") == "https://h/c/d/")
        #expect(PageHistory.normalized("https://[::1]:443/x?") == "https://[::1]/x")
        #expect(PageHistory.normalized("https://[::1]:8443/x") == "https://[::1]:8443/x")
        #expect(PageHistory.normalized("https://h/%7euser/%2f%e9") == "https://h/~user/%2F%E9")
        #expect(PageHistory.normalized("/relative/./path?b&a#x") == "/relative/path?a&b")
        #expect(PageHistory.normalized("https://h/p?x=1%") == "https://h/p?x=1%")
    }

    @Test("the client's query credential does not tell pages apart (a next_url carries it, the first request not)")
    func credentialParameter() {
        var history = PageHistory()
        let first = history.insert(url: "https://h/media?count=20", ignoring: "access_token")
        let withToken = history.insert(url: "https://h/media?access_token=tok-1&count=20", ignoring: "access_token")
        let next = history.insert(url: "https://h/media?access_token=tok-1&count=20&max_id=9", ignoring: "access_token")
        #expect(first && !withToken && next)
        var strict = PageHistory()
        let plain = strict.insert(url: "https://h/media?count=20")
        let token = strict.insert(url: "https://h/media?access_token=tok-1&count=20")
        #expect(plain && token, "without `ignoring`, the parameter is part of the page")
    }

    @Test("cursors: A, B, A repeats at the third; cursors and URLs never match each other")
    func cursors() {
        var history = PageHistory()
        let taken = [
            history.insert(cursor: "A"), history.insert(cursor: "B"), history.insert(cursor: "A"),
            history.insert(url: "A"), history.insert(cursor: "a"), history.insert(cursor: "e\u{301}"),
            // Canonically equivalent to the one before, but other bytes: another cursor.
            history.insert(cursor: "\u{e9}"),
        ]
        #expect(taken == [true, true, false, true, true, true, true])
        #expect(history.count == 6)
    }

    @Test("100,000 pages of 250-byte URLs keep under 4 MB: digests, not the 25 MB of URLs")
    func memory() {
        var history = PageHistory()
        let padding = String(repeating: "x", count: 200)
        var allNew = true
        for page in 0..<100_000 {
            allNew = history.insert(url: "https://api.example.com/items?cursor=\(padding)\(page)") && allNew
        }
        let again = history.insert(url: "https://api.example.com/items?cursor=\(padding)99999")
        #expect(allNew && !again)
        #expect(history.count == 100_000)
        #expect(history.storedBytes < 4 << 20, "\(history.storedBytes) bytes")
    }

    @Test("page_param at the largest int asks for the same page again (no trap), which the history refuses")
    func pageNumberOverflow() throws {
        let pagination = Pagination.pageParameter(name: "page", first: 1)
        let first = Request("GET", "/items", query: [("page", String(Int.max - 1))])
        let page = Response(status: 200, headers: Headers(), body: Array("[1]".utf8), url: "https://h/items")
        let second = try #require(pagination.next(after: page, request: first, itemCount: 1))
        #expect(second.query.last?.1 == String(Int.max))
        let third = try #require(pagination.next(after: page, request: second, itemCount: 1))
        #expect(third.query.last?.1 == String(Int.max))
    }

    @Test(
        "page_param with pages: the page the body's count names is the last; a body without it ends the list",
        arguments: [
            ("1", #"{"p": {"pagesCount": 3}}"#, 5, "2"), ("2", #"{"p": {"pagesCount": 3}}"#, 5, "3"),
            ("3", #"{"p": {"pagesCount": 3}}"#, 5, nil), ("4", #"{"p": {"pagesCount": 3}}"#, 5, nil),
            ("1", #"{"p": {}}"#, 5, nil), ("1", #"{"p": {"pagesCount": "x"}}"#, 5, nil),
            ("1", #"{"p": {"pagesCount": 3}}"#, 0, nil), ("1", #"{"p": {"pagesCount": 1}}"#, 5, nil),
        ] as [(String, String, Int, String?)])
    func pageCount(_ page: String, _ body: String, _ items: Int, _ next: String?) {
        let pagination = Pagination.pageParameter(name: "page", first: 1, pages: ["p", "pagesCount"])
        let request = Request("GET", "/items", query: [("page", page)])
        let response = Response(status: 200, headers: Headers(), body: Array(body.utf8), url: "https://h/items")
        let following = pagination.next(after: response, request: request, itemCount: items)
        #expect(following?.query.last { $0.0 == "page" }?.1 == next, "page \(page) of \(body)")
        // Without `pages`, only an empty page ends the list.
        let plain = Pagination.pageParameter(name: "page", first: 1)
        #expect((plain.next(after: response, request: request, itemCount: items) == nil) == (items == 0))
    }
}
