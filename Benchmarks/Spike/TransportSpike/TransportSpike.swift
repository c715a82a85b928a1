// The transport spike of issue 13: the same workload (GETs of a small JSON body from a
// loopback server) through three call paths, driven from the main thread with no Swift
// concurrency of its own:
//
//   curl-seq / curl-fan   libcurl: one reused easy handle; the multi interface, 32 in flight
//   nio-seq  / nio-fan    AsyncHTTPClient's futures, waited on directly from the thread
//   task-seq / task-fan   today's path: HTTPTransport.send in Task.detached, the thread
//                         polling a semaphore every 20 ms (withoutGIL), map's task group
//
// Every mode builds the request headers per request and hands back a WebAPI.Response
// (status, headers, body bytes), as the real transport must.
//
//   transport-spike MODE COUNT WARMUP URL
//
// runs WARMUP + COUNT requests through one client and prints one JSON line. Benchmarks/spike.py
// runs it (CPU time from rusage, instructions from callgrind). Built only with
// APIMACRO_SPIKE=1 (see Package.swift and Benchmarks/SPIKE-transport.md).
import AsyncHTTPClient
import CCurlLinked
import Dispatch
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization
import WebAPI

let maximumBodySize = 256 << 20
let fanOut = 32
let accept = "application/vnd.github+json"
let userAgent = "apimacro-spike"

struct SpikeFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

// MARK: - libcurl

/// What the callbacks of one easy handle collect.
final class CurlSink {
    var status = 0
    var headers: [(String, String)] = []
    var body: [UInt8] = []
    var tooBig = false

    /// One line of a response head, as libcurl hands it over (with its CR LF).
    ///
    /// Parsed as bytes: Foundation's trimming cost more than the whole exchange in
    /// libcurl.
    func headerLine(_ line: UnsafeBufferPointer<UInt8>) {
        if line.starts(with: "HTTP/".utf8) {
            headers.removeAll(keepingCapacity: true)  // a new response head (1xx, then the final one)
            return
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return }  // the blank line
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A }
        var start = colon + 1
        var end = line.count
        while start < end, isSpace(line[start]) { start += 1 }
        while end > start, isSpace(line[end - 1]) { end -= 1 }
        let name = String(decoding: UnsafeBufferPointer(rebasing: line[..<colon]), as: UTF8.self)
        let value = String(decoding: UnsafeBufferPointer(rebasing: line[start..<end]), as: UTF8.self)
        headers.append((name, value))
    }

    func reset() {
        headers.removeAll(keepingCapacity: true)
        body.removeAll(keepingCapacity: true)
        tooBig = false
    }
}

/// One easy handle with its sink; reused request after request (keep-alive).
final class CurlEasy {
    let handle: UnsafeMutableRawPointer
    let sink = CurlSink()
    private var headerList: UnsafeMutablePointer<curl_slist>?

    init() throws {
        guard let handle = curl_easy_init() else { throw SpikeFailure("curl_easy_init failed") }
        self.handle = handle
        let sinkPointer = Unmanaged.passUnretained(sink).toOpaque()
        _ = ccurl_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
        _ = ccurl_setopt_string(handle, CURLOPT_ACCEPT_ENCODING, "")  // gzip, deflate, br, zstd: decoded
        _ = ccurl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, 10_000)
        _ = ccurl_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0)  // redirects belong to the pipeline
        _ = ccurl_setopt_offset(handle, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(maximumBodySize))
        _ = ccurl_setopt_pointer(handle, CURLOPT_WRITEDATA, sinkPointer)
        _ = ccurl_setopt_write(handle, CURLOPT_WRITEFUNCTION) { data, size, count, user in
            let total = size * count
            guard let user else { return 0 }
            let sink = Unmanaged<CurlSink>.fromOpaque(user).takeUnretainedValue()
            guard sink.body.count + total <= maximumBodySize else {
                sink.tooBig = true
                return 0  // aborts the transfer (CURLE_WRITE_ERROR)
            }
            if let data, total > 0 {
                data.withMemoryRebound(to: UInt8.self, capacity: total) {
                    sink.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: total))
                }
            }
            return total
        }
        _ = ccurl_setopt_pointer(handle, CURLOPT_HEADERDATA, sinkPointer)
        _ = ccurl_setopt_write(handle, CURLOPT_HEADERFUNCTION) { data, size, count, user in
            let total = size * count
            guard let user, let data else { return total }
            let sink = Unmanaged<CurlSink>.fromOpaque(user).takeUnretainedValue()
            data.withMemoryRebound(to: UInt8.self, capacity: total) {
                sink.headerLine(UnsafeBufferPointer(start: $0, count: total))
            }
            return total
        }
    }

    /// Sets up the next request: URL, headers and the deadline of the whole exchange.
    func prepare(url: String, headers: [(String, String)], timeoutMilliseconds: Int) {
        sink.reset()
        if let headerList { curl_slist_free_all(headerList) }
        var list: UnsafeMutablePointer<curl_slist>?
        for (name, value) in headers { list = curl_slist_append(list, "\(name): \(value)") }
        headerList = list
        _ = ccurl_setopt_string(handle, CURLOPT_URL, url)
        _ = ccurl_setopt_slist(handle, CURLOPT_HTTPHEADER, list)
        _ = ccurl_setopt_long(handle, CURLOPT_TIMEOUT_MS, timeoutMilliseconds)
    }

    /// The response after a transfer ended with `code`.
    func finish(_ code: CURLcode, url: String) throws -> Response {
        guard code == CURLE_OK else {
            let reason =
                sink.tooBig ? "body larger than \(maximumBodySize) bytes" : String(cString: curl_easy_strerror(code))
            throw SpikeFailure("GET \(url): \(reason)")
        }
        var status = 0
        _ = ccurl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        return Response(status: status, headers: Headers(sink.headers), body: sink.body, url: url)
    }

    deinit {
        if let headerList { curl_slist_free_all(headerList) }
        curl_easy_cleanup(handle)
    }
}

func requestHeaders() -> [(String, String)] {
    [("Accept", accept), ("User-Agent", userAgent)]
}

func curlSequential(count: Int, url: String, check: (Response) throws -> Void) throws {
    let easy = try CurlEasy()
    for _ in 0..<count {
        easy.prepare(url: url, headers: requestHeaders(), timeoutMilliseconds: 30_000)
        try check(try easy.finish(curl_easy_perform(easy.handle), url: url))
    }
}

func curlFanOut(count: Int, url: String, check: (Response) throws -> Void) throws {
    guard let multi = curl_multi_init() else { throw SpikeFailure("curl_multi_init failed") }
    defer { curl_multi_cleanup(multi) }
    _ = ccurl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, 2 * fanOut)
    var idle: [CurlEasy] = try (0..<min(fanOut, count)).map { _ in try CurlEasy() }
    var busy: [UnsafeMutableRawPointer: CurlEasy] = [:]
    var started = 0
    var done = 0
    func startNext() {
        guard started < count, let easy = idle.popLast() else { return }
        easy.prepare(url: url, headers: requestHeaders(), timeoutMilliseconds: 30_000)
        busy[easy.handle] = easy
        _ = curl_multi_add_handle(multi, easy.handle)
        started += 1
    }
    while started < min(fanOut, count) { startNext() }
    while done < count {
        var running: Int32 = 0
        _ = curl_multi_perform(multi, &running)
        var queued: Int32 = 0
        while let message = curl_multi_info_read(multi, &queued) {
            guard message.pointee.msg == CURLMSG_DONE, let handle = message.pointee.easy_handle,
                let easy = busy.removeValue(forKey: handle)
            else { continue }
            let code = message.pointee.data.result
            _ = curl_multi_remove_handle(multi, handle)
            try check(try easy.finish(code, url: url))
            done += 1
            idle.append(easy)
            startNext()
        }
        if done < count { _ = curl_multi_poll(multi, nil, 0, 1_000, nil) }
    }
}

// MARK: - AsyncHTTPClient, futures waited on from the thread

func makeClient() -> HTTPClient {
    // The configuration of HTTPTransport.
    var configuration = HTTPClient.Configuration(
        redirectConfiguration: .disallow,
        timeout: .init(connect: .seconds(10)),
        decompression: .enabled(limit: .ratio(200))
    )
    configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 64
    configuration.connectionPool.idleTimeout = .seconds(60)
    configuration.connectionPool.retryConnectionEstablishment = false
    return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
}

func nioRequest(_ client: HTTPClient, url: String) throws -> EventLoopFuture<Response> {
    var headers = HTTPHeaders()
    for (name, value) in requestHeaders() { headers.add(name: name, value: value) }
    headers.add(name: "Accept-Encoding", value: "gzip, deflate")
    let request = try HTTPClient.Request(url: url, method: .GET, headers: headers)
    let delegate = ResponseAccumulator(request: request, maxBodySize: maximumBodySize)
    return client.execute(request: request, delegate: delegate, deadline: .now() + .seconds(30)).futureResult.map {
        response in
        Response(
            status: Int(response.status.code), headers: Headers(response.headers.map { ($0.name, $0.value) }),
            body: response.body.map { Array(buffer: $0) } ?? [], url: url)
    }
}

func nioSequential(count: Int, url: String, check: (Response) throws -> Void) throws {
    let client = makeClient()
    defer { try? client.syncShutdown() }
    for _ in 0..<count { try check(try nioRequest(client, url: url).wait()) }
}

func nioFanOut(count: Int, url: String, check: @escaping @Sendable (Response) throws -> Void) throws {
    let client = makeClient()
    defer { try? client.syncShutdown() }
    let slots = DispatchSemaphore(value: fanOut)
    let group = DispatchGroup()
    let firstError = Mutex<String?>(nil)
    for _ in 0..<count {
        slots.wait()
        group.enter()
        try nioRequest(client, url: url).whenComplete { result in
            do {
                try check(try result.get())
            } catch {
                firstError.withLock { $0 = $0 ?? String(describing: error) }
            }
            slots.signal()
            group.leave()
        }
    }
    group.wait()
    if let message = firstError.withLock({ $0 }) { throw SpikeFailure(message) }
}

// MARK: - today's path: Task.detached, a semaphore polled every 20 ms

final class Outcome<T: Sendable>: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let stored = Mutex<Result<T, any Error>?>(nil)

    func finish(_ result: Result<T, any Error>) {
        stored.withLock { $0 = result }
        semaphore.signal()
    }

    /// What `withoutGIL` does while the GIL is released: wake every 20 ms to look for a signal.
    func wait() throws -> T {
        while semaphore.wait(timeout: .now() + .milliseconds(20)) != .success {}
        guard let result = stored.withLock({ $0 }) else { throw SpikeFailure("no result") }
        return try result.get()
    }
}

func detached<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let outcome = Outcome<T>()
    Task.detached {
        do { outcome.finish(.success(try await body())) } catch { outcome.finish(.failure(error)) }
    }
    return try outcome.wait()
}

func exchange(_ url: String) -> Exchange {
    Exchange(method: "GET", url: url, headers: Headers([("Accept", accept)]), body: [], timeout: 30)
}

func taskSequential(count: Int, url: String, check: (Response) throws -> Void) throws {
    let transport = HTTPTransport(userAgent: userAgent)
    defer { try? detached { try await transport.shutdown() } }
    for _ in 0..<count {
        let request = exchange(url)
        try check(try detached { try await transport.send(request) })
    }
}

func taskFanOut(count: Int, url: String, check: @escaping @Sendable (Response) throws -> Void) throws {
    let transport = HTTPTransport(userAgent: userAgent)
    defer { try? detached { try await transport.shutdown() } }
    // apimacro.map's shape: a task group with at most 32 calls in flight.
    let responses = try detached {
        try await withThrowingTaskGroup(of: Response.self) { group in
            var next = 0
            var collected: [Response] = []
            collected.reserveCapacity(count)
            while next < min(fanOut, count) {
                group.addTask { try await transport.send(exchange(url)) }
                next += 1
            }
            while let response = try await group.next() {
                collected.append(response)
                if next < count {
                    group.addTask { try await transport.send(exchange(url)) }
                    next += 1
                }
            }
            return collected
        }
    }
    for response in responses { try check(response) }
}

// MARK: - main

@main
enum TransportSpike {
    static func main() {
        let arguments = CommandLine.arguments
        guard arguments.count == 5, let count = Int(arguments[2]), let warmup = Int(arguments[3]) else {
            FileHandle.standardError.write(Data("usage: transport-spike MODE COUNT WARMUP URL\n".utf8))
            exit(2)
        }
        let mode = arguments[1]
        let url = arguments[4]
        let received = Mutex(0)
        let check: @Sendable (Response) throws -> Void = { response in
            guard response.status == 200, response.body.first == UInt8(ascii: "{"),
                response.headers["content-type"] != nil
            else {
                throw SpikeFailure("unexpected response: \(response.status), \(response.body.count) bytes")
            }
            received.withLock { $0 += response.body.count }
        }
        curl_global_init(Int(CURL_GLOBAL_DEFAULT))
        let run: (Int) throws -> Void
        switch mode {
        case "curl-seq": run = { try curlSequential(count: $0, url: url, check: check) }
        case "curl-fan": run = { try curlFanOut(count: $0, url: url, check: check) }
        case "nio-seq": run = { try nioSequential(count: $0, url: url, check: check) }
        case "nio-fan": run = { try nioFanOut(count: $0, url: url, check: check) }
        case "task-seq": run = { try taskSequential(count: $0, url: url, check: check) }
        case "task-fan": run = { try taskFanOut(count: $0, url: url, check: check) }
        default:
            FileHandle.standardError.write(Data("transport-spike: unknown mode \(mode)\n".utf8))
            exit(2)
        }
        do {
            // The warm-up and the measured requests run in one call, so one client (one pool) serves both.
            try run(warmup + count)
        } catch {
            FileHandle.standardError.write(Data("transport-spike: \(error)\n".utf8))
            exit(1)
        }
        print("{\"mode\": \"\(mode)\", \"requests\": \(warmup + count), \"bytes\": \(received.withLock { $0 })}")
    }
}
