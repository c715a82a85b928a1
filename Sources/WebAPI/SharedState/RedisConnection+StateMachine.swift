extension RedisConnection {
    /// The rules of one connection's pipelining, without I/O and without reading a clock
    /// (`now` is passed in): which replies are due and by when, what `hold` kept back, what a
    /// write left unwritten, and the steps of a script call made without waiting
    /// (`beginEvaluation`), with its `NOSCRIPT` replays.
    ///
    /// `RedisConnection` drives it: it writes and reads the socket as the actions say and tells
    /// it what happened, as AsyncHTTPClient's `RequestBag` drives `RequestBag.StateMachine`.
    struct StateMachine: Equatable {
        typealias Instant = ContinuousClock.Instant

        /// A command written (or held) whose reply is still to be read.
        struct Unanswered: Equatable {
            /// The script it ran by digest (sent again in full on `NOSCRIPT`), and the rest of its arguments.
            var script: RedisScript?
            var tail: [[UInt8]]
            /// When it was sent, plus the timeout: its reply is due by then.
            var deadline: Instant
        }

        /// A command the socket took only part of, and how far.
        struct Unwritten: Equatable {
            var bytes: [UInt8]
            var offset: Int
        }

        /// A script call made by a thread that never waits on the socket (see `beginEvaluation`).
        struct Evaluation: Equatable {
            let script: RedisScript
            let tail: [[UInt8]]
            let deadline: Instant
            /// Its `EVALSHA` is written; its text was sent in full after a `NOSCRIPT`.
            var sent = false
            var inFull = false
            /// Once sent: how many replies of earlier commands (`unanswered`, the first ones) come
            /// back before this one's.
            var ahead = 0
            /// Earlier scripts whose replies said `NOSCRIPT` after this one was sent: sent again in
            /// full, in their order, before this one goes in full, or after its reply.
            var again: [[[UInt8]]] = []
            /// Its text in full is written (after a `NOSCRIPT`, once `again` was).
            var fullSent = false
            /// Its reply, when it came before `again` could be written whole.
            var answer: RedisReply?
            /// What the machine asked the driver for and waits to hear about; nil between calls.
            var awaiting: Awaiting?
        }

        /// The write or read a script call's progress waits on.
        enum Awaiting: Equatable {
            /// Its `EVALSHA` (after any held commands) is being written.
            case call([UInt8])
            /// The reply of an earlier command is being read.
            case earlier
            /// Its own reply is being read.
            case own
            /// An earlier script is being written again in full; `rest` follow it. With `answer`
            /// (this call's reply, come already) they go after it; without, before its text in full.
            case again([UInt8], rest: [[[UInt8]]], answer: RedisReply?)
            /// Its text in full is being written.
            case full([UInt8])
        }

        /// What happened, for a script call's progress.
        enum Event: Equatable {
            /// `evaluationProgress` was called.
            case progress
            /// The socket took this many bytes of the write asked for (never waiting).
            case wrote(Int)
            /// A whole reply had arrived.
            case arrived(RedisReply)
            /// No whole reply has arrived yet.
            case nothingArrived
        }

        /// What the driver does next for a script call.
        enum Action: Equatable {
            /// Write these bytes without waiting, then report `.wrote`.
            case write([UInt8])
            /// Read a reply if one has arrived, without waiting, then report `.arrived` or `.nothingArrived`.
            case read
            /// Return this from `evaluationProgress`.
            case finish(EvaluationStep)
            /// The connection is broken for this reason.
            case fail(String)
        }

        /// Bounds each command, from its first byte written to its reply's last byte read.
        let timeout: Duration
        /// Commands written whose replies are not read yet, oldest first (read before the next command).
        private(set) var unanswered: [Unanswered] = []
        /// A command written only in part (the writer was not to wait).
        private(set) var unwritten: Unwritten?
        /// Commands `hold` kept back, formatted, in order: written before (and with) the next command.
        ///
        /// Their entries are the last `heldCount` of `unanswered`.
        private(set) var held: [UInt8] = []
        private(set) var heldCount = 0
        /// When the oldest held command was held.
        private(set) var heldSince: Instant?
        /// Whether commands are held back.
        var isHolding: Bool { !held.isEmpty }

        /// The script call `beginEvaluation` started.
        var evaluation: Evaluation?

        /// A new connection's rules; a test passes any state.
        init(
            timeout: Duration, unanswered: [Unanswered] = [], unwritten: Unwritten? = nil, held: [UInt8] = [],
            heldCount: Int = 0, heldSince: Instant? = nil, evaluation: Evaluation? = nil
        ) {
            self.timeout = timeout
            self.unanswered = unanswered
            self.unwritten = unwritten
            self.held = held
            self.heldCount = heldCount
            self.heldSince = heldSince
            self.evaluation = evaluation
        }

        // MARK: Pipelining

        /// Keeps `command` (formatted) back: it goes out before the next one written.
        mutating func hold(_ command: [UInt8], script: RedisScript?, tail: [[UInt8]], now: Instant) {
            if held.isEmpty { heldSince = now }
            held += command
            heldCount += 1
            unanswered.append(Unanswered(script: script, tail: tail, deadline: now + timeout))
        }

        /// `bytes` after the held commands, which leave `held`: their replies are now due by
        /// `timeout` from this write, like any command's.
        mutating func takeHeld(before bytes: [UInt8], now: Instant) -> [UInt8] {
            guard !held.isEmpty else { return bytes }
            let deadline = now + timeout
            for index in (unanswered.count - heldCount)..<unanswered.count { unanswered[index].deadline = deadline }
            let all = held + bytes
            held = []
            heldCount = 0
            heldSince = nil
            return all
        }

        /// Records a write: `written` of a command's `bytes` went out.
        ///
        /// Its reply is due as `due` says (nil: whoever wrote it reads it); what is left is kept
        /// for `takeUnwritten`. Returns whether it was written whole.
        @discardableResult
        mutating func wrote(_ bytes: [UInt8], written: Int, due: Unanswered?) -> Bool {
            if let due { unanswered.append(due) }
            guard written < bytes.count else { return true }
            unwritten = Unwritten(bytes: bytes, offset: written)
            return false
        }

        /// The part of a command the socket has not taken yet, now to be written.
        mutating func takeUnwritten() -> Unwritten? {
            defer { unwritten = nil }
            return unwritten
        }

        /// The oldest command whose reply is due, now to be read.
        mutating func nextUnanswered() -> Unanswered? {
            unanswered.isEmpty ? nil : unanswered.removeFirst()
        }

        /// When what is written now must be written by: the last reply's deadline, or a timeout from `now`.
        func writeDeadline(now: Instant) -> Instant {
            unanswered.last?.deadline ?? now + timeout
        }

        /// The command that sends `script` again in full (`EVAL`) when `reply` says the server
        /// does not know it (`NOSCRIPT`, after a restart or `SCRIPT FLUSH`); nil otherwise.
        static func again(_ script: RedisScript?, _ tail: [[UInt8]], after reply: RedisReply) -> [[UInt8]]? {
            guard let script, isNoScript(reply) else { return nil }
            return [RedisConnection.eval, Array(script.text.utf8)] + tail
        }

        /// Whether `reply` says the server does not know the script it was asked to run.
        static func isNoScript(_ reply: RedisReply) -> Bool {
            if case .error(let text) = reply, text.hasPrefix("NOSCRIPT") { return true }
            return false
        }

        // MARK: A script call without waiting

        /// Starts a script call, due `timeout` from `now`.
        mutating func beginEvaluation(_ script: RedisScript, _ tail: [[UInt8]], now: Instant) {
            evaluation = Evaluation(script: script, tail: tail, deadline: now + timeout)
        }

        /// The script call's next step after `event` (see `RedisConnection.evaluationProgress`):
        /// its reply ends it.
        mutating func evaluation(_ event: Event, now: Instant) -> Action {
            guard var call = evaluation else { return .fail("no script call under way") }
            let action = advance(&call, event, now: now)
            if case .finish(.reply) = action { evaluation = nil } else { evaluation = call }
            return action
        }

        private mutating func advance(_ call: inout Evaluation, _ event: Event, now: Instant) -> Action {
            let awaiting = call.awaiting
            call.awaiting = nil
            switch (awaiting, event) {
            case (nil, .progress):
                if unwritten != nil { return .finish(.blocked) }
                guard !call.sent else { return next(&call) }
                call.sent = true
                call.ahead = unanswered.count
                // Written at once even while earlier replies are due; its reply may be there
                // already after the write (Redis often runs before the write returns): read at once.
                return write(
                    .call(takeHeld(before: RedisConnection.format(call.script.evalsha + call.tail), now: now)), &call)
            case (.call(let bytes), .wrote(let written)):
                guard wrote(bytes, written: written, due: nil) else { return .finish(.blocked) }
                return next(&call)
            case (.earlier, .arrived(let reply)):
                guard let sent = nextUnanswered() else { return next(&call) }
                call.ahead -= 1
                if let command = StateMachine.again(sent.script, sent.tail, after: reply) { call.again.append(command) }
                return next(&call)
            case (.earlier, .nothingArrived):
                return pending(until: min(unanswered.first?.deadline ?? call.deadline, call.deadline), now: now)
            case (.own, .arrived(let reply)):
                let again = call.again
                call.again = []
                if call.inFull || !StateMachine.isNoScript(reply) {
                    // Answered. Earlier scripts to send again are written now, their replies read
                    // and dropped before the next command's.
                    return writeAgain(again[...], answer: reply, &call, now: now)
                }
                // NOSCRIPT: the earlier scripts in full, in their order, then this one.
                call.inFull = true
                return writeAgain(again[...], answer: nil, &call, now: now)
            case (.own, .nothingArrived):
                return pending(until: call.deadline, now: now)
            case (.again(let bytes, let rest, let answer), .wrote(let written)):
                let due = Unanswered(script: nil, tail: [], deadline: call.deadline)
                guard wrote(bytes, written: written, due: due) else {
                    // The rest goes on the connection's thread (`finishEvaluation`), the answer kept.
                    call.again = rest
                    if let answer { call.answer = answer }
                    return .finish(.blocked)
                }
                return writeAgain(rest[...], answer: answer, &call, now: now)
            case (.full(let bytes), .wrote(let written)):
                guard wrote(bytes, written: written, due: nil) else { return .finish(.blocked) }
                return next(&call)
            default:
                return .fail("a script call went out of step")
            }
        }

        /// Asks for the write of `awaiting`'s bytes.
        private func write(_ awaiting: Awaiting, _ call: inout Evaluation) -> Action {
            call.awaiting = awaiting
            switch awaiting {
            case .call(let bytes), .again(let bytes, _, _), .full(let bytes): return .write(bytes)
            case .earlier, .own: return .read
            }
        }

        /// The replies of earlier commands first, then this call's own.
        private func next(_ call: inout Evaluation) -> Action {
            call.awaiting = call.ahead > 0 && !unanswered.isEmpty ? .earlier : .own
            return .read
        }

        /// Writes the first of `commands` (earlier scripts in full); once none is left, the
        /// answer ends the call, or, without one, this script goes in full.
        private mutating func writeAgain(
            _ commands: ArraySlice<[[UInt8]]>, answer: RedisReply?, _ call: inout Evaluation, now: Instant
        ) -> Action {
            if let command = commands.first {
                if answer == nil { call.ahead += 1 }
                let bytes = takeHeld(before: RedisConnection.format(command), now: now)
                return write(.again(bytes, rest: Array(commands.dropFirst()), answer: answer), &call)
            }
            if let answer { return .finish(.reply(answer)) }
            call.fullSent = true
            let full = [RedisConnection.eval, Array(call.script.text.utf8)] + call.tail
            return write(.full(takeHeld(before: RedisConnection.format(full), now: now)), &call)
        }

        /// `.readable` until `deadline`; past it, the command has failed.
        private func pending(until deadline: Instant, now: Instant) -> Action {
            now < deadline ? .finish(.readable(deadline: deadline)) : .fail("no answer in time")
        }
    }
}
