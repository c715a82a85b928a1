// apimacro-testserver [--port N] [--soak SEED] [--env]
//
// Runs the loopback test server until SIGINT or SIGTERM, so the example macros can be tried
// without the internet:
//
//     swift run apimacro-testserver      # first line: APIMACRO_GITHUB_URL=http://127.0.0.1:PORT
//     APIMACRO_GITHUB_URL=http://127.0.0.1:PORT apimacro run examples/hello.py
//
// With --env it starts the server in the background (its own session, output to /dev/null),
// prints `export` lines for a shell and returns, so one line sets everything up:
//
//     eval "$(.build/debug/apimacro-testserver --env)"   # then: kill $APIMACRO_TESTSERVER_PID

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

let usage = "usage: apimacro-testserver [--port N] [--soak SEED] [--env]"

/// The faults of the fault soak (Benchmarks/soak.py), each with its probability per request:
/// 5 % 503, 2 % connection resets, 2 % answers 1.5 s late (past the soak's 1 s timeout),
/// 1 % truncated bodies, 1 % 429 with `retry-after: 1`.
let soakFaults: [(Fault, Double)] = [
    (.status(503), 0.05), (.reset, 0.02), (.delay(milliseconds: 1500), 0.02), (.truncated, 0.01),
    (.rateLimited(retryAfter: 1), 0.01),
]

/// The command line, or nil after a usage error.
struct Arguments {
    /// 0: a free port.
    var port = 0
    var soak: UInt64?
    /// `--env`: serve in the background and print `export` lines.
    var env = false
    /// Internal to `--env`: the background server, which prints its URLs and then closes stdout.
    var background = false

    /// These arguments for the background server.
    var forBackground: [String] {
        ["--background", "--port", String(port)] + (soak.map { ["--soak", String($0)] } ?? [])
    }
}

func parseArguments(_ arguments: [String]) -> Arguments? {
    var parsed = Arguments()
    var remaining = arguments.makeIterator()
    while let argument = remaining.next() {
        switch argument {
        case "--env":
            parsed.env = true
        case "--background":
            parsed.background = true
        case "--port":
            guard let value = remaining.next(), let number = Int(value), (0...65535).contains(number) else {
                emit("apimacro-testserver: --port needs a number from 0 to 65535\n\(usage)", to: .standardError)
                return nil
            }
            parsed.port = number
        case "--soak":
            guard let value = remaining.next(), let seed = UInt64(value) else {
                emit("apimacro-testserver: --soak needs a seed (a whole number)\n\(usage)", to: .standardError)
                return nil
            }
            parsed.soak = seed
        case "-h", "--help":
            emit(usage, to: .standardOutput)
            exit(0)
        default:
            emit("apimacro-testserver: unknown argument \(argument)\n\(usage)", to: .standardError)
            return nil
        }
    }
    return parsed
}

/// The variables that point apimacro's clients at the server (`NAME=VALUE` lines).
func variables(_ server: TestServer) -> [String] {
    [
        "APIMACRO_GITHUB_URL=\(server.baseURL)", "APIMACRO_INSTAGRAM_URL=\(server.baseURL)/instagram/graph",
        // Bitly, the shortener's default backend, with the server's made-up token (not Google's
        // legacy routes, which `APIMACRO_SHORTENER=google` would need as well).
        "APIMACRO_SHORTENER_URL=\(server.baseURL)/bitly/v4",
        "APIMACRO_SHORTENER_TOKEN=bitly-test-token",
    ]
}

/// `--env`: starts this program again as a background server in a session of its own, reads the
/// variables it prints, and prints them as `export` lines (with its pid, to stop it) for `eval`.
func startInBackground(_ arguments: Arguments) -> Int32 {
    let executable =
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    let pipe = Pipe()
    let process: Spawned
    do {
        process = try Spawned(
            executable, arguments.forBackground, environment: ProcessInfo.processInfo.environment,
            stdout: .descriptor(pipe.fileHandleForWriting.fileDescriptor))
        try pipe.fileHandleForWriting.close()
    } catch {
        emit("apimacro-testserver: cannot start the background server: \(error)", to: .standardError)
        return 1
    }
    // The background server closes its stdout once it has printed the variables (or failed).
    let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    let lines = output.split(separator: "\n").map(String.init)
    guard lines.contains(where: { $0.hasPrefix("APIMACRO_GITHUB_URL=") }) else {
        emit(
            lines.isEmpty ? "apimacro-testserver: the background server did not start" : lines.joined(separator: "\n"),
            to: .standardError)
        return 1
    }
    for line in lines { emit("export \(line)", to: .standardOutput) }
    let pid = process.processIdentifier
    emit("export APIMACRO_TESTSERVER_PID=\(pid)", to: .standardOutput)
    emit(
        "echo 'apimacro-testserver: serving in the background (pid \(pid)); stop it with: kill $APIMACRO_TESTSERVER_PID' >&2",
        to: .standardOutput)
    return 0
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
    if arguments.env { return startInBackground(arguments) }
    // The background server leaves the terminal's session: the shell's Ctrl-C and hang-up are not for it.
    if arguments.background { _ = setsid() }
    let server: TestServer
    do {
        server = try await TestServer.start(port: arguments.port)
    } catch {
        // In the background this reaches --env's caller through stdout.
        emit(
            "apimacro-testserver: cannot listen: \(error)", to: arguments.background ? .standardOutput : .standardError)
        return 1
    }
    if let seed = arguments.soak {
        server.setRandomFaults(seed: seed, rates: soakFaults)
        emit(
            "apimacro-testserver: soak mode (seed \(seed)): random 503s, resets, delays, truncations, 429s",
            to: .standardError)
    }
    for line in variables(server) { emit(line, to: .standardOutput) }
    if arguments.background {
        // Close stdout (point it at /dev/null), so `--env` and the shell's $(...) read to the end and return.
        let null = open("/dev/null", O_WRONLY)
        if null >= 0 {
            dup2(null, STDOUT_FILENO)
            close(null)
        }
    }
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
