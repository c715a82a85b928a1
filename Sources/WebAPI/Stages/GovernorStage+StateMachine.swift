extension GovernorStage {
    /// The governor's rules for one request, without I/O or clocks: what to do with each answer
    /// of the reserve script (`GovernorScripts.reserve`) and each finished wait.
    ///
    /// `GovernorStage.handle` drives it: it asks Redis when the action is `.reserve`, sleeps
    /// for `.sleep` and reports how long that took, and sends, or refuses, as the action says.
    struct StateMachine: Equatable {
        /// A unit of the budget reserved: the request goes, and its answer is recorded.
        struct Reservation: Equatable {
            /// The only request in all processes while the budget is unknown: others wait on its answer.
            var probe: Bool
            /// The resource the script counted the request against.
            var resource: [UInt8]
        }

        enum State: Equatable {
            /// Asking Redis for a unit of the budget, after `waited` seconds of waits.
            case reserving(waited: Double)
            /// Sleeping `seconds` before asking again; `measured`: a pace, probe or slot wait,
            /// which counts as long as it took when that is longer.
            case sleeping(waited: Double, seconds: Double, measured: Bool)
            /// Decided: sent, refused, or let through.
            case done
        }

        enum Event: Equatable {
            /// The reserve script's reply; nil when Redis is not usable.
            case reply(RedisReply?)
            /// The sleep asked for ended, `took` seconds after it began.
            case slept(took: Double)
        }

        enum Action: Equatable {
            /// Run the reserve script.
            case reserve
            /// Sleep this long, then report `.slept`.
            case sleep(Double)
            /// Send the request, then record its answer.
            case send(Reservation)
            /// Send the request without the governor: Redis gave no usable answer.
            case sendUngoverned
            /// Raise `RateLimited`: the shared budget is spent until `reset` (epoch seconds), `seconds`
            /// away, longer than `APIMACRO_MAX_WAIT` allows after the waits so far.
            case refuseSpent(reset: Int64, seconds: Double)
            /// Raise `RateLimited`: `waited` seconds of pace or probe waits, and `seconds` more would
            /// pass `APIMACRO_MAX_WAIT`.
            case refuseWaited(waited: Double, seconds: Double)
        }

        private(set) var state = State.reserving(waited: 0)
        /// `APIMACRO_MAX_WAIT`: the waits of one request, all told.
        let maxWait: Double

        /// A request's rules from its start, or, for a test, from `state`.
        init(maxWait: Double, state: State = .reserving(waited: 0)) {
            self.maxWait = maxWait
            self.state = state
        }

        /// The state after `event`, and the action for the driver; nil when the event does not
        /// belong to the state (a reply while sleeping, anything once done): nothing changes.
        mutating func receive(_ event: Event) -> Action? {
            switch (state, event) {
            case (.reserving(let waited), .reply(let reply)):
                return reserved(reply, waited: waited)
            case (.sleeping(let waited, let seconds, let measured), .slept(let took)):
                state = .reserving(waited: waited + (measured ? max(seconds, took) : seconds))
                return .reserve
            default:
                return nil
            }
        }

        private mutating func reserved(_ reply: RedisReply?, waited: Double) -> Action {
            guard let reply, let code = reply.elements.first?.integer else {
                state = .done
                return .sendUngoverned
            }
            let values = reply.elements.dropFirst()
            switch code {
            case 0, 3:
                state = .done
                return .send(Reservation(probe: code == 3, resource: values.first?.bytes ?? []))
            case 2:
                // Spent: the reset (epoch seconds) and Redis's clock (milliseconds).
                let reset = values.first?.integer ?? 0
                let now = Double(values.dropFirst().first?.integer ?? 0) / 1000
                let seconds = RateLimitPolicy.wait(untilReset: Double(reset), now: now)
                guard waited + seconds <= maxWait else {
                    state = .done
                    return .refuseSpent(reset: reset, seconds: seconds)
                }
                state = .sleeping(waited: waited, seconds: seconds, measured: false)
                return .sleep(seconds)
            default:
                // Paced, or another process is probing, or every slot is taken (the wait in
                // microseconds): these waits count against APIMACRO_MAX_WAIT too, so a peer's tiny
                // APIMACRO_MAX_RATE or a probe left by a killed process cannot hold this request
                // without bound; one wait is at most a second. Each counts as long as it took when
                // that is longer than asked: a Redis naming 1 µs again and again cannot keep the
                // request asking for its pace past APIMACRO_MAX_WAIT either.
                let seconds = Double(max(1, min(values.first?.integer ?? 10_000, 1_000_000))) / 1_000_000
                guard waited + seconds <= maxWait else {
                    state = .done
                    return .refuseWaited(waited: waited, seconds: seconds)
                }
                state = .sleeping(waited: waited, seconds: seconds, measured: true)
                return .sleep(seconds)
            }
        }

        /// Whether the record of an answer may be held back for the next command on the connection.
        ///
        /// Only a routine answer's, which nobody waits on (`SharedState.post(holding:)`). Not a
        /// probe's (other processes wait for it), not a lease under APIMACRO_MAX_CONCURRENCY (it
        /// holds a slot), not an answer that failed or spent the budget.
        static func holdsRecord(probe: Bool, maxConcurrency: Int?, answered: Bool, remaining: Int?) -> Bool {
            !probe && (maxConcurrency ?? 0) <= 0 && answered && (remaining.map { $0 > 0 } ?? true)
        }
    }
}
