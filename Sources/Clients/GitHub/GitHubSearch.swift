import Platform
public import WebAPI

/// GitHub's search, past the 1,000 results one query may give: what to ask for next, page after
/// page, as a pure state machine (the binding sends and decodes; this decides).
///
/// GitHub answers at most 1,000 results per query (asking past them is a 422, "Only the first
/// 1000 search results are available") and says how many there are in `total_count`. For
/// `issues` and `repositories`, when there are more and the caller wants more, the query is
/// split by `created:` ranges, each halved until it holds at most 1,000, and the slices are read
/// one after another (oldest first, or newest first for `sort="created", order="desc"`), so every
/// result comes once. Kinds that cannot be split (`code`, `commits`, `users`), a query that names
/// `created:` itself, and a slice of a single second that still holds more stop at the cap with
/// one warning. `incomplete_results` (GitHub's search timed out) is one warning too.
/// https://docs.github.com/rest/search/search
public final class GitHubSearch {
    /// What can be searched.
    public enum Kind: String, CaseIterable, Sendable {
        case issues, repositories, code, commits, users

        /// Whether a query of this kind may be split by `created:` (its results have a creation date).
        var splits: Bool { self == .issues || self == .repositories }
    }

    /// The most results GitHub gives one query.
    public static let resultCap = 1000
    /// GitHub's first day (2007-10-01, UTC): nothing on it was created earlier.
    static let firstDay = 1_191_196_800

    /// One page's facts, as the binding read them from the decoded answer.
    public struct Page {
        public var totalCount: Int
        public var incompleteResults: Bool
        public var itemCount: Int
        /// The first item's `created_at` (`2020-09-13T12:26:40Z`), if it has one.
        public var firstCreatedAt: String?

        public init(totalCount: Int, incompleteResults: Bool, itemCount: Int, firstCreatedAt: String? = nil) {
            self.totalCount = totalCount
            self.incompleteResults = incompleteResults
            self.itemCount = itemCount
            self.firstCreatedAt = firstCreatedAt
        }
    }

    /// What to do with a page: keep its items or not, what to ask for next, what to tell the user.
    public struct Decision {
        /// Whether the page's items are results (false for a slice that is being split).
        public var keepsItems: Bool
        /// The next request, or nil at the end.
        public var next: Request?
        /// Warnings to print (each at most once per search).
        public var warnings: [String]
    }

    /// A `created:` range, inclusive, in epoch seconds; nil ends are open.
    struct Slice: Equatable {
        var from: Int?
        var to: Int?
    }

    public let kind: Kind
    public let query: String
    let sort: String?
    let order: String?
    let limit: Int?
    let perPage: Int
    let now: Int
    /// The slices still to read, the next last (nil before the query is split).
    private var pending: [Slice]?
    /// The slice being read and its page.
    private var slice: Slice?
    private var page = 1
    private var warnedCap = false
    private var warnedIncomplete = false
    /// The newest result's creation time, asked for once before the first split (one result,
    /// newest first): the upper end the halving starts from, so the slices depend on the
    /// results and not on the clock, and a recorded search replays.
    private var newest: Int?
    /// Whether the request last made is that question.
    private var probing = false
    /// Slices halved so far.
    private var splits = 0
    /// At most this many halvings (some 4 million results): a server that says every range,
    /// however narrow, holds more than 1,000 cannot make a search send requests without end.
    public static let maxSplits = 4096

    /// - Parameters:
    ///   - kind: what to search.
    ///   - query: GitHub's search syntax (`repo:o/r is:issue label:bug`).
    ///   - sort: GitHub's `sort` for the kind, or nil for best match.
    ///   - order: `asc` or `desc`, or nil.
    ///   - limit: the most results wanted, or nil for all.
    ///   - now: epoch seconds (the newest creation time the split needs).
    public init(kind: Kind, query: String, sort: String?, order: String?, limit: Int?, now: Double) {
        self.kind = kind
        self.query = query
        self.sort = sort
        self.order = order
        self.limit = limit
        perPage = min(100, max(1, limit ?? 100))
        self.now = Int(now)
    }

    /// Whether the query may be split: its kind has creation dates, and it names none itself.
    var splittable: Bool {
        kind.splits && !query.lowercased().split(separator: " ").contains { $0.hasPrefix("created:") }
    }

    /// The first request.
    public func first() -> Request { request(slice: nil, page: 1) }

    /// The decision after `page`, the answer to the request last made.
    public func after(_ page: Page) -> Decision {
        var warnings: [String] = []
        if page.incompleteResults, !warnedIncomplete {
            warnedIncomplete = true
            warnings.append(
                "apimacro: warning: GitHub's \(kind.rawValue) search for \(query.debugDescription) timed out and "
                    + "returned incomplete results (incomplete_results); some may be missing")
        }
        if probing {
            probing = false
            // Never before GitHub's first day (a hostile date would leave nothing to halve).
            newest = max(Self.firstDay + 1, page.firstCreatedAt.flatMap(Self.epoch) ?? (now + 86_400))
            pending = []
            pending?.append(contentsOf: (split(nil) ?? []).reversed())
            return Decision(keepsItems: false, next: nextSlice(), warnings: warnings)
        }
        let wantsMore = limit.map { $0 > Self.resultCap } ?? true
        if self.page == 1, page.totalCount > Self.resultCap, wantsMore {
            if splittable, slice == nil, newest == nil {
                // Before the first split: the newest result's creation time.
                probing = true
                return Decision(keepsItems: false, next: newestFirstProbe(), warnings: warnings)
            }
            if splits < Self.maxSplits, let halves = split(slice), splittable {
                // The slice (or the whole query) holds too many: read its halves instead.
                splits += 1
                if pending == nil { pending = [] }
                pending?.append(contentsOf: halves.reversed())
                return Decision(keepsItems: false, next: nextSlice(), warnings: warnings)
            }
            if !warnedCap {
                warnedCap = true
                warnings.append(capWarning(page.totalCount))
            }
        }
        let reachable = min(page.totalCount, Self.resultCap)
        if page.itemCount > 0, self.page * perPage < reachable {
            self.page += 1
            return Decision(keepsItems: true, next: request(slice: slice, page: self.page), warnings: warnings)
        }
        return Decision(keepsItems: true, next: nextSlice(), warnings: warnings)
    }

    /// The first page of the next slice, or nil when none is left.
    private func nextSlice() -> Request? {
        guard let next = pending?.popLast() else { return nil }
        slice = next
        page = 1
        return request(slice: next, page: 1)
    }

    /// `slice` halved, in reading order, or nil when it is one second.
    func split(_ slice: Slice?) -> [Slice]? {
        let whole = slice ?? Slice(from: nil, to: nil)
        let from = whole.from ?? Self.firstDay
        let to = whole.to ?? newest ?? (now + 86_400)
        guard to > from else { return nil }
        let middle = from + (to - from) / 2
        let halves = [Slice(from: whole.from, to: middle), Slice(from: middle + 1, to: whole.to)]
        return newestFirst ? halves.reversed() : halves
    }

    /// Whether the slices are read newest first (`sort="created", order="desc"`).
    var newestFirst: Bool { sort == "created" && order == "desc" }

    private func capWarning(_ total: Int) -> String {
        let why: String
        if !kind.splits {
            why = "\(kind.rawValue) search cannot be split by creation date"
        } else if !splittable {
            why = "the query names created: itself"
        } else if splits >= Self.maxSplits {
            why = "GitHub still counted more than 1,000 after \(Self.maxSplits) splits by creation date"
        } else {
            why = "more than 1,000 were created within one second"
        }
        return "apimacro: warning: GitHub search gives at most 1,000 results per query; \(query.debugDescription) "
            + "matched \(total) \(kind.rawValue): stopping at 1,000 (\(why))"
    }

    /// The request for `page` of `slice` (nil: the query as given).
    private func request(slice: Slice?, page: Int) -> Request {
        var q = query
        if let slice { q += " " + Self.qualifier(slice) }
        var parameters = [("q", q)]
        if let sort { parameters.append(("sort", sort)) }
        if let order { parameters.append(("order", order)) }
        parameters += [("per_page", String(perPage)), ("page", String(page))]
        return Request("GET", "/search/\(kind.rawValue)", query: parameters)
    }

    /// The query's one newest result (`sort=created`, `order=desc`, one a page).
    private func newestFirstProbe() -> Request {
        Request(
            "GET", "/search/\(kind.rawValue)",
            query: [("q", query), ("sort", "created"), ("order", "desc"), ("per_page", "1"), ("page", "1")])
    }

    /// `2020-01-31T23:59:59Z` (or with an offset, or fractions) as epoch seconds.
    static func epoch(_ text: String) -> Int? {
        UTCDates.epoch(iso8601: text).map { Int($0) }
    }

    /// `created:A..B`, `created:<=B` or `created:>=A`, with times in UTC to the second.
    static func qualifier(_ slice: Slice) -> String {
        switch (slice.from, slice.to) {
        case (let from?, let to?): "created:\(timestamp(from))..\(timestamp(to))"
        case (nil, let to?): "created:<=\(timestamp(to))"
        case (let from?, nil): "created:>=\(timestamp(from))"
        case (nil, nil): ""
        }
    }

    /// `2020-01-31T23:59:59Z`.
    static func timestamp(_ epoch: Int) -> String {
        UTCDates.timestamp(Double(epoch))
    }
}
