import Clients
import PythonBridge
import WebAPI

/// The state behind a lazy iterator over every item of every page: once a page is taken, the
/// next one is fetched ahead (off the Python thread, its body scanned there: `JSONTape`) while
/// Python uses up its items (and, for pages linked by their headers, while it decodes the page
/// before), and `limit` stops early without fetching another page.
///
/// At most one page is fetched ahead, only for a GET, never past `limit`; its answer, or its
/// error, is taken when the loop reaches it, and the fetch is cancelled when the iterator goes
/// away first (a `break`, an exception, a closed generator, Ctrl-C). Stopping early thus costs
/// the server at most the one request ahead.
///
/// Every paginator (GitHub's `Link`, Instagram's and plugins' `next_url`, `page_param`,
/// GraphQL cursors) goes through `history`: asking again for a page this iteration has
/// fetched is a `ParseError` naming it, raised once the items before it are used up.
final class PageState {
    /// A decoded page as the `page` reader sees it.
    struct Page {
        /// The page's items (a list).
        let items: PyRef
        /// The request for the next page, or nil at the end.
        let next: Request?
        /// What asks for `next` when its URL does not tell pages apart (a GraphQL cursor in
        /// the POSTed variables): the loop check compares these instead of URLs.
        var cursor: String? = nil
    }

    let client: APIClient
    let pagination: Pagination
    let decoder: JSONDecoding
    /// The list inside a decoded page (GitHub: the page itself).
    let items: (PyRef) throws -> PyRef
    /// The value the pagination reads in a decoded page (`Pagination.bodyPath`: the next URL,
    /// a cursor, a total), for kinds that read one.
    let bodyValue: ((PyRef) throws -> String?)?
    /// For pages linked inside the body in other ways (GraphQL's `pageInfo`): the items of a
    /// decoded page and the request for the next one; replaces `items` and `pagination`.
    let page: ((PyRef, Response, Request) throws -> Page)?
    /// Checks a decoded page before its items are read (a plugin's error inside a 2xx answer).
    let validate: ((PyRef, Response, Request) throws -> Void)?
    /// Where `Page.cursor` comes from, for the error that names a repeated one.
    let cursorSource: String
    private var next: Request?
    /// The cursor that asks for `next`, when cursors tell pages apart.
    private var nextCursor: String?
    /// The pages asked for so far (their URLs, or cursors).
    private var history = PageHistory()
    /// Whether `next` is in `history` already (its fetch failed and is being tried again).
    private var nextRemembered = false
    private var buffer: PyRef?
    private var index = 0
    private var count = 0
    private(set) var yielded = 0
    /// Pages fetched so far (the progress line counts them).
    private(set) var pages = 0
    let limit: Int?
    /// The `cache=` of the call that made the iterator, for every page.
    private let cache: CacheChoice?
    /// The fetch of `next` started ahead, while Python uses up the page before it, with the
    /// scan of its body (`JSONTape`) done on the same task.
    private var ahead: Task<Fetched, any Error>?
    /// The page after the one `start(after:)` was given is fetched ahead once its first item is
    /// taken, not before: an iterator only built (its type looked at, never looped over) asks
    /// the server for nothing more.
    private var aheadOnFirstItem = false

    /// A page fetched ahead: its response, and its body's tape (nil when the one-pass parser
    /// reads it: not JSON it takes whole, or the fetch was cancelled).
    struct Fetched: Sendable {
        let response: Response
        let tape: JSONTape?
    }

    init(
        client: APIClient, first: Request, pagination: Pagination, limit: Int?, decoder: JSONDecoding,
        items: @escaping (PyRef) throws -> PyRef = { $0 }, bodyValue: ((PyRef) throws -> String?)? = nil,
        page: ((PyRef, Response, Request) throws -> Page)? = nil, firstCursor: String? = nil,
        cursorSource: String = "the cursor", validate: ((PyRef, Response, Request) throws -> Void)? = nil
    ) {
        self.validate = validate
        self.client = client
        self.next = first
        // The call's `cache=`: every page the iterator fetches later keeps to it.
        self.next?.cache = first.cache ?? CacheChoice.current
        self.cache = first.cache ?? CacheChoice.current
        self.nextCursor = firstCursor
        self.cursorSource = cursorSource
        self.pagination = pagination
        self.limit = limit
        self.decoder = decoder
        self.items = items
        self.bodyValue = bodyValue
        self.page = page
    }

    /// The next item as a new reference, or nil at the end (GIL held): what `__next__` gives.
    func nextItem() throws -> PyPointer? {
        if let limit, yielded >= limit { return nil }
        while true {
            if let buffer, index < count {
                if aheadOnFirstItem {
                    aheadOnFirstItem = false
                    fetchAhead()
                }
                guard let item = PySequence.item(buffer, index) else { throw PythonErrorSet() }
                index += 1
                yielded += 1
                return item
            }
            guard let request = next else { return nil }
            if !nextRemembered {
                try remember(request)
                nextRemembered = true
            }
            let response: Response
            var tape: JSONTape?
            var scanned = true
            if let ahead {
                // Fetched ahead: its answer, or its error, is raised here where the loop reaches it.
                self.ahead = nil
                let fetched = try withoutGIL {
                    try await withTaskCancellationHandler {
                        try await ahead.value
                    } onCancel: {
                        ahead.cancel()
                    }
                }
                response = fetched.response
                tape = fetched.tape
            } else {
                // Nothing ahead (the first page, or after `limit` or a write): fetched now, and
                // scanned below once the next page's fetch, when its headers name it, is on its
                // way (the two overlap). Building from a tape under the GIL costs a page a third
                // of a one-pass parse.
                let client = self.client
                let sent = sendable(request)
                response = try withoutGIL { try await client.send(sent) }
                scanned = false
            }
            pages += 1
            let nextKnown = fetchAheadBeforeDecoding(after: response, request: request)
            do {
                if !scanned {
                    // The GIL released, as a page fetched ahead is scanned.
                    tape = try withoutGILAtOnce { response.body.withUnsafeBufferPointer { JSONTape.scan($0) } }
                }
                try take(
                    decoder.decode(response, api: client.configuration.name, tape: tape), response: response,
                    request: request, nextKnown: nextKnown)
            } catch {
                // This page cannot be used: the iterator stays on it, as without the early fetch.
                if nextKnown { abandonEarlyFetch(returningTo: request) }
                throw error
            }
        }
    }

    deinit {
        // The loop stopped before the page fetched ahead: its transfer ends now.
        ahead?.cancel()
    }

    /// `request` as sent: with the iteration's `cache=`.
    private func sendable(_ request: Request) -> Request {
        var sent = request
        if sent.cache == nil { sent.cache = cache }
        return sent
    }

    /// Starts fetching `next` while Python uses up the page just taken, and scanning its body
    /// once it is in (the GIL-free part of decoding it: `JSONTape`).
    ///
    /// Only a GET (never a write, nor a GraphQL POST), only when `limit` needs items past this
    /// page, and only once `next` passes the loop check (when it does not, the error is raised
    /// where the loop reaches it, as without a fetch ahead). The request runs on Swift's pool, its transfer on
    /// the transport's thread, through the same stages as any (cache, governor, rate limits,
    /// redaction).
    private func fetchAhead() {
        guard ahead == nil, let request = next, request.method == "GET" else { return }
        if let limit, yielded + count >= limit { return }
        if !nextRemembered {
            guard (try? remember(request)) != nil else { return }
            nextRemembered = true
        }
        let client = self.client
        let sent = sendable(request)
        ahead = Task.detached {
            let response = try await client.send(sent)
            // The body's scan (no GIL) happens here, while Python uses up the page before; a
            // cancelled fetch (the loop stopped) scans nothing.
            let tape = Task.isCancelled ? nil : response.body.withUnsafeBufferPointer { JSONTape.scan($0) }
            return Fetched(response: response, tape: tape)
        }
    }

    /// Starts the next page's fetch before this page is decoded, where its request is known
    /// from the response's headers alone (`Link`, a header cursor).
    ///
    /// Only with no `limit` to count items against and no check of the decoded page (`validate`,
    /// `page`); still at most one page ahead (the page being decoded is the one Python has), so
    /// the fetch and its scan overlap the decoding too, not only Python's use of the items. True
    /// when `next` is set (and, when it passes the loop check, being fetched): `take` then leaves
    /// it as it is.
    private func fetchAheadBeforeDecoding(after response: Response, request: Request) -> Bool {
        guard limit == nil, page == nil, validate == nil, nextCursor == nil, ahead == nil else { return false }
        switch pagination {
        case .linkHeader, .headerCursor: break
        default: return false
        }
        next = pagination.next(after: response, request: request, itemCount: nil)
        nextRemembered = false
        fetchAhead()
        return true
    }

    /// Undoes `fetchAheadBeforeDecoding` when the page before cannot be used (not JSON, not a
    /// list): the fetch is cancelled and forgotten, and the iterator is on `request` again.
    private func abandonEarlyFetch(returningTo request: Request) {
        ahead?.cancel()
        ahead = nil
        if nextRemembered, let next { history.forget(next, on: client) }
        next = request
        nextRemembered = true
    }

    /// What reads the value a pagination needs at its `bodyPath` in a decoded page (the next
    /// URL, a cursor, a total; nil when it is missing or null: the last page); nil for kinds
    /// that read none.
    static func bodyValue(of pagination: Pagination) -> ((PyRef) throws -> String?)? {
        guard let path = pagination.bodyPath else { return nil }
        return { payload in
            guard let found = payload.value(at: path), !found.isNone else { return nil }
            return try found.str()
        }
    }

    /// Starts from a page already fetched and decoded (a plugin's first answer, read to see
    /// whether its result is a list at all): its items come first, then the pages after it.
    func start(after payload: PyRef, response: Response, request: Request) throws {
        try remember(request)
        try take(payload, response: response, request: request, fetchingAhead: false)
        aheadOnFirstItem = true
    }

    /// Notes that `request` is being asked for; a page this iteration asked for before is a
    /// `ParseError` naming it (again at every later `next()`: the iterator stays where it is).
    private func remember(_ request: Request) throws {
        if let nextCursor {
            try history.visit(cursor: nextCursor, from: cursorSource, on: client)
        } else {
            try history.visit(request, on: client)
        }
    }

    /// Buffers a decoded page's items and works out the request for the next page (GIL held).
    ///
    /// `nextKnown`: `fetchAheadBeforeDecoding` has set `next` (and started its fetch) already;
    /// `fetchingAhead`: false to leave the fetch of `next` for later.
    private func take(
        _ payload: PyRef, response: Response, request: Request, nextKnown: Bool = false, fetchingAhead: Bool = true
    ) throws {
        try validate?(payload, response, request)
        if page == nil { try history.answered(response, pagination: pagination, on: client) }
        let paged = try page?(payload, response, request)
        let list = try paged?.items ?? items(payload)
        guard PySequence.isList(list) else {
            throw APIError(
                .parse, "\(response.url) did not answer with a list of items", status: response.status,
                url: response.url, api: client.configuration.name, body: response.text)
        }
        buffer = list
        index = 0
        count = PySequence.count(list)
        if nextKnown { return }
        nextRemembered = false
        if let paged {
            next = paged.next
            nextCursor = paged.cursor
        } else {
            let found: String?? = try bodyValue.map { try $0(payload) }
            next = pagination.next(after: response, request: request, itemCount: count, bodyValue: found)
        }
        if fetchingAhead {
            aheadOnFirstItem = false
            fetchAhead()
        }
    }
}

/// The Python class of page iterators (`github.repos(...)` returns one).
enum PageIteratorClass {
    /// The class; with `progress`, a long iteration shows its pages, items, the requests so far
    /// (`log`) and its client's rate limit on the progress line, erased when it ends.
    static func make(progress: (line: ProgressLine, log: ExchangeLog)? = nil) throws -> NativeClass<PageState> {
        let builder = NativeClass<PageState>(
            name: "PageIterator", module: "apimacro",
            doc:
                "A lazy iterator over every item of every page; the next page (a GET) is fetched while the items of "
                + "the one before it are used, never past `limit`.")
        try builder.iterator { state in
            guard let (line, log) = progress else { return try state.nextItem() }
            if state.pages == 0 { line.begin() }
            guard let item = try state.nextItem() else {
                line.erase()
                return nil
            }
            line.update(
                ProgressLine.pagesText(
                    client: state.client.configuration.name, pages: state.pages, items: state.yielded,
                    requests: log.requests, remaining: state.client.rateLimit?.remaining))
            return item
        }
        try builder.method("__repr__") { state, _ in
            try PyRef(
                string:
                    "<apimacro page iterator over \(state.client.configuration.name)\(state.limit.map { ", limit \($0)" } ?? "")>"
            )
        }
        try builder.build()
        return builder
    }
}

extension PageState {
    /// An iteration over pages as a client declares them (`Paging`): the items at its path (a
    /// page without them is a `ParseError` naming it), the next page by its pagination, and a
    /// next page's link followed as the client follows it.
    convenience init(client: APIClient, first: Request, paging: Paging, limit: Int?, decoder: JSONDecoding) {
        let name = client.configuration.name
        let items = paging.items
        let follow = paging.followLink
        let read = PageState.bodyValue(of: paging.pagination)
        var bodyValue = read
        if case .nextURL = paging.pagination, let read {
            bodyValue = { payload in try read(payload).map(follow) }
        }
        self.init(
            client: client, first: first, pagination: paging.pagination, limit: limit, decoder: decoder,
            items: { payload in
                guard let items else { return payload }
                guard let found = payload.value(at: items) else {
                    throw APIError(.parse, "\(name): a page without `\(items.joined(separator: "."))`", api: name)
                }
                return found
            }, bodyValue: bodyValue)
    }
}
