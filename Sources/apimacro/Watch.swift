import Clients
import MacroRuntime
import Platform
import Synchronization
import WebAPI

/// `apimacro run --every SPAN`: the macro again and again in one process (the cache warm,
/// connections kept), start to start, each successful cycle's state committed by the runner.
enum Watch {
    /// The signal that asked the watch to end between cycles (0: none).
    static let stopping = Atomic<Int32>(0)
    /// The writing end of a pipe the signal handler writes a byte to, so that a wait between
    /// cycles wakes at once (an event, not a polling interval); -1 until `wake` made it.
    static let wakeWriter = Atomic<Int32>(-1)
    /// Its reading end, which the wait polls with the time left as its timeout.
    static let wakeReader = Atomic<Int32>(-1)

    /// Makes the wake pipe (both ends close-on-exec, the writer non-blocking) once, before the
    /// handlers are installed.
    static func makeWakePipe() {
        guard wakeReader.load(ordering: .relaxed) < 0 else { return }
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        _ = fcntl(ends[1], F_SETFL, fcntl(ends[1], F_GETFL) | O_NONBLOCK)
        wakeReader.store(ends[0], ordering: .relaxed)
        wakeWriter.store(ends[1], ordering: .relaxed)
    }

    /// The exit codes of a cycle that a signal ended (Ctrl-C, SIGTERM, SIGHUP).
    static let stoppedCodes: Set<Int32> = [129, 130, 143]

    /// The longest wait after failed cycles in a row: an hour, or the span when it is longer.
    static func backoff(every: Double, failures: Int) -> Double {
        guard failures > 0 else { return every }
        return min(every * pow(2, Double(min(failures, 20))), max(every, 3600))
    }

    /// `--every`'s span: `10m`, `30s`, `1h`, `2d` or seconds, at least one second; nil otherwise.
    static func span(_ text: String) -> Double? {
        guard let seconds = CacheChoice.seconds(text.lowercased()), seconds >= 1 else { return nil }
        return seconds
    }

    /// Runs cycles until a signal ends the watch; returns 0 then.
    static func run(every: Double, quiet: Bool, cycle: () throws -> Int32) rethrows -> Int32 {
        // Between cycles SIGINT and SIGTERM end the watch; during one, the runner's own handlers
        // abandon it (and put the default back when it ends: ours go straight back on).
        makeWakePipe()
        let previous = (signal(SIGINT, onSignal), signal(SIGTERM, onSignal))
        defer {
            signal(SIGINT, previous.0)
            signal(SIGTERM, previous.1)
        }
        var failures = 0
        var number = 0
        while stopping.load(ordering: .relaxed) == 0 {
            number += 1
            let start = ContinuousClock.now
            if !quiet {
                let stamp = UTCDates.timestamp(Date().timeIntervalSince1970)
                StandardStreams.output("\(number == 1 ? "" : "\n")--- cycle \(number), \(stamp)\n")
            }
            _ = PollInterval.take()
            let code = try cycle()
            signal(SIGINT, onSignal)
            signal(SIGTERM, onSignal)
            if stoppedCodes.contains(code) { break }
            var wait = every
            if code == 0 {
                failures = 0
            } else {
                failures += 1
                wait = backoff(every: every, failures: failures)
                StandardStreams.error(
                    "apimacro: cycle \(number) failed (exit \(code)); next in \(SecondsText.format(wait)) s (backing off)\n"
                )
            }
            if let asked = PollInterval.take(), asked > wait {
                wait = asked
                if !quiet {
                    StandardStreams.error(
                        "apimacro: the server asks to poll every \(SecondsText.format(asked)) s (X-Poll-Interval)\n")
                }
            }
            if !sleep(until: start + .milliseconds(Int64(wait * 1000))) { break }
        }
        return 0
    }

    /// Waits until `end`; false when SIGINT or SIGTERM came meanwhile (the handler's byte on
    /// the wake pipe ends the wait at once).
    private static func sleep(until end: ContinuousClock.Instant) -> Bool {
        let reader = wakeReader.load(ordering: .relaxed)
        while stopping.load(ordering: .relaxed) == 0 {
            let left = ContinuousClock.now.duration(to: end)
            guard left > .zero else { break }
            let milliseconds = left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1
            var poller = pollfd(fd: reader, events: Int16(POLLIN), revents: 0)
            // A negative descriptor is ignored by poll: then this is a plain timed wait.
            _ = poll(&poller, 1, Int32(clamping: min(milliseconds, 3_600_000)))
            if poller.revents & Int16(POLLIN) != 0 {
                var drained = [UInt8](repeating: 0, count: 64)
                _ = read(reader, &drained, drained.count)
            }
        }
        return stopping.load(ordering: .relaxed) == 0
    }

    static let onSignal: @convention(c) (Int32) -> Void = { number in
        Watch.stopping.store(number, ordering: .relaxed)
        var byte: UInt8 = 1
        _ = write(Watch.wakeWriter.load(ordering: .relaxed), &byte, 1)
    }
}
