// apimacro-testserver [--port N] [--soak SEED]
//
// Runs the loopback test server until SIGINT or SIGTERM, so the example macros can be tried
// without the internet:
//
//     swift run apimacro-testserver      # first line: APIMACRO_GITHUB_URL=http://127.0.0.1:PORT
//     APIMACRO_GITHUB_URL=http://127.0.0.1:PORT apimacro run examples/hello.py

import Dispatch
import Foundation
import TestSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes a line to a standard stream at once (FileHandle does not buffer).
func emit(_ line: String, to handle: FileHandle) {
    handle.write(Data((line + "\n").utf8))
}

let usage = "usage: apimacro-testserver [--port N] [--soak SEED]"

/// The faults of the fault soak (Benchmarks/soak.py), each with its probability per request:
/// 5 % 503, 2 % connection resets, 2 % answers 1.5 s late (past the soak's 1 s timeout),
/// 1 % truncated bodies, 1 % 429 with `retry-after: 1`.
let soakFaults: [(Fault, Double)] = [
    (.status(503), 0.05), (.reset, 0.02), (.delay(milliseconds: 1500), 0.02), (.truncated, 0.01),
    (.rateLimited(retryAfter: 1), 0.01),
]

/// The command line: the port (0: a free one) and the soak seed, or nil after a usage error.
func parseArguments(_ arguments: [String]) -> (port: Int, soak: UInt64?)? {
    var port = 0
    var soak: UInt64?
    var remaining = arguments.makeIterator()
    while let argument = remaining.next() {
        switch argument {
        case "--port":
            guard let value = remaining.next(), let number = Int(value), (0...65535).contains(number) else {
                emit("apimacro-testserver: --port needs a number from 0 to 65535\n\(usage)", to: .standardError)
                return nil
            }
            port = number
        case "--soak":
            guard let value = remaining.next(), let seed = UInt64(value) else {
                emit("apimacro-testserver: --soak needs a seed (a whole number)\n\(usage)", to: .standardError)
                return nil
            }
            soak = seed
        case "-h", "--help":
            emit(usage, to: .standardOutput)
            exit(0)
        default:
            emit("apimacro-testserver: unknown argument \(argument)\n\(usage)", to: .standardError)
            return nil
        }
    }
    return (port, soak)
}

/// Resolves when the process receives SIGINT or SIGTERM.
func waitForTerminationSignal() async {
    let queue = DispatchQueue(label: "apimacro-testserver.signals")
    let (signals, continuation) = AsyncStream.makeStream(of: Int32.self)
    let sources = [SIGINT, SIGTERM].map { number in
        signal(number, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
        source.setEventHandler { continuation.yield(number) }
        source.resume()
        return source
    }
    for await _ in signals { break }
    for source in sources { source.cancel() }
}

/// Serves until a termination signal; returns the exit status.
func run() async -> Int32 {
    guard let arguments = parseArguments(Array(CommandLine.arguments.dropFirst())) else { return 2 }
    let server: TestServer
    do {
        server = try await TestServer.start(port: arguments.port)
    } catch {
        emit("apimacro-testserver: cannot listen: \(error)", to: .standardError)
        return 1
    }
    if let seed = arguments.soak {
        server.setRandomFaults(seed: seed, rates: soakFaults)
        emit("apimacro-testserver: soak mode (seed \(seed)): random 503s, resets, delays, truncations, 429s", to: .standardError)
    }
    emit("APIMACRO_GITHUB_URL=\(server.baseURL)", to: .standardOutput)
    emit("APIMACRO_INSTAGRAM_URL=\(server.baseURL)/instagram/v1", to: .standardOutput)
    emit("APIMACRO_SHORTENER_URL=\(server.baseURL)/urlshortener/v1", to: .standardOutput)
    emit("apimacro-testserver: other host \(server.otherHostURL); Ctrl-C to stop", to: .standardError)
    await waitForTerminationSignal()
    do {
        try await server.shutdown()
    } catch {
        emit("apimacro-testserver: shutdown: \(error)", to: .standardError)
        return 1
    }
    return 0
}

exit(await run())
