import Testing

@testable import WebAPI

/// The Redis connection's rules alone, without a server, a socket or a clock.
///
/// `RedisConnection.StateMachine`: each row is a state, an event, the action expected and the
/// state after it. The same rules against real (and hostile) servers: `SharedStateTests`.
@Suite("the Redis connection's state machine, transition by transition")
struct RedisConnectionStateMachineTests {
    typealias Machine = RedisConnection.StateMachine
    typealias Evaluation = Machine.Evaluation

    static let t0 = ContinuousClock.now
    static func at(_ seconds: Double) -> ContinuousClock.Instant { t0 + .milliseconds(Int(seconds * 1000)) }
    static let timeout = Duration.seconds(5)

    /// The call under test, its earlier scripts, and their bytes on the wire.
    static let script = RedisScript("return 1")
    static let tail: [[UInt8]] = [Array("1".utf8), Array("k".utf8)]
    static let earlier = RedisScript("return 2")
    static let earlierTail: [[UInt8]] = [Array("0".utf8)]
    static let evalsha = RedisConnection.format(script.evalsha + tail)
    static let full = RedisConnection.format([RedisConnection.eval, Array(script.text.utf8)] + tail)
    static let again = [RedisConnection.eval, Array(earlier.text.utf8)] + earlierTail
    static let againBytes = RedisConnection.format(again)
    static let again2 = [RedisConnection.eval, Array("return 3".utf8), Array("0".utf8)]
    static let held = RedisConnection.format([Array("PING".utf8)])
    static let noScript = RedisReply.error("NOSCRIPT No matching script. Please use EVAL.")

    /// A call due at 5 s, as `beginEvaluation` at 0 starts it.
    static func call(
        sent: Bool = true, inFull: Bool = false, ahead: Int = 0, again: [[[UInt8]]] = [], fullSent: Bool = false,
        answer: RedisReply? = nil, awaiting: Machine.Awaiting? = nil
    ) -> Evaluation {
        Evaluation(
            script: script, tail: tail, deadline: at(5), sent: sent, inFull: inFull, ahead: ahead, again: again,
            fullSent: fullSent, answer: answer, awaiting: awaiting)
    }

    /// An earlier command whose reply is due at `deadline`, run by `script` when given.
    static func due(_ deadline: Double, _ script: RedisScript? = nil) -> Machine.Unanswered {
        Machine.Unanswered(script: script, tail: script == nil ? [] : earlierTail, deadline: at(deadline))
    }

    /// A write `againBytes` asked for, a call's earlier script sent again: due by the call's deadline.
    static let dueAgain = Machine.Unanswered(script: nil, tail: [], deadline: at(5))

    static func machine(
        unanswered: [Machine.Unanswered] = [], unwritten: Machine.Unwritten? = nil, held: [UInt8] = [],
        heldCount: Int = 0, heldSince: Double? = nil, _ evaluation: Evaluation?
    ) -> Machine {
        Machine(
            timeout: timeout, unanswered: unanswered, unwritten: unwritten, held: held, heldCount: heldCount,
            heldSince: heldSince.map(at), evaluation: evaluation)
    }

    struct Row: Sendable, CustomTestStringConvertible {
        let name: String
        let state: Machine
        let event: Machine.Event
        let now: Double
        let action: Machine.Action
        let next: Machine
        var testDescription: String { name }

        init(
            _ name: String, _ state: Machine, _ event: Machine.Event, now: Double = 1, _ action: Machine.Action,
            _ next: Machine
        ) {
            (self.name, self.state, self.event, self.now, self.action, self.next) = (
                name, state, event, now, action, next
            )
        }
    }

    static let rows: [Row] = [
        // Starting: the call is written at once, earlier replies or not.
        Row(
            "not sent, nothing due: EVALSHA written", machine(call(sent: false)), .progress, .write(evalsha),
            machine(call(awaiting: .call(evalsha)))),
        Row(
            "not sent, one reply due: written too, one reply ahead of its own",
            machine(unanswered: [due(3)], call(sent: false)), .progress, .write(evalsha),
            machine(unanswered: [due(3)], call(ahead: 1, awaiting: .call(evalsha)))),
        Row(
            "not sent, a command held: the held one goes first, its reply due a timeout from now",
            machine(unanswered: [due(2)], held: held, heldCount: 1, heldSince: 0.5, call(sent: false)), .progress,
            .write(held + evalsha), machine(unanswered: [due(6)], call(ahead: 1, awaiting: .call(held + evalsha)))),
        Row(
            "a command left unwritten: blocked, nothing changes",
            machine(unwritten: .init(bytes: [1, 2], offset: 1), call(sent: false)), .progress, .finish(.blocked),
            machine(unwritten: .init(bytes: [1, 2], offset: 1), call(sent: false))),
        Row(
            "sent before, called again: reads its reply", machine(call()), .progress, .read,
            machine(call(awaiting: .own))),
        Row(
            "sent before, a reply ahead: reads that first", machine(unanswered: [due(3)], call(ahead: 1)), .progress,
            .read, machine(unanswered: [due(3)], call(ahead: 1, awaiting: .earlier))),
        // Writing the call.
        Row(
            "EVALSHA written whole: its reply is read", machine(call(awaiting: .call(evalsha))),
            .wrote(evalsha.count), .read, machine(call(awaiting: .own))),
        Row(
            "EVALSHA written whole, a reply ahead: that one is read first",
            machine(unanswered: [due(3)], call(ahead: 1, awaiting: .call(evalsha))), .wrote(evalsha.count), .read,
            machine(unanswered: [due(3)], call(ahead: 1, awaiting: .earlier))),
        Row(
            "EVALSHA written in part: blocked, the rest kept", machine(call(awaiting: .call(evalsha))), .wrote(3),
            .finish(.blocked), machine(unwritten: .init(bytes: evalsha, offset: 3), call())),
        // Earlier replies.
        Row(
            "an earlier reply: dropped, its own read next",
            machine(unanswered: [due(3)], call(ahead: 1, awaiting: .earlier)),
            .arrived(.integer(1)), .read, machine(call(awaiting: .own))),
        Row(
            "an earlier script's NOSCRIPT: it is to go again in full",
            machine(unanswered: [due(3, earlier)], call(ahead: 1, awaiting: .earlier)), .arrived(noScript), .read,
            machine(call(again: [again], awaiting: .own))),
        Row(
            "an earlier plain command's NOSCRIPT-like error: nothing to send again",
            machine(unanswered: [due(3)], call(ahead: 1, awaiting: .earlier)), .arrived(noScript), .read,
            machine(call(awaiting: .own))),
        Row(
            "two ahead: the second read next",
            machine(unanswered: [due(2), due(3)], call(ahead: 2, awaiting: .earlier)),
            .arrived(.status("OK")), .read, machine(unanswered: [due(3)], call(ahead: 1, awaiting: .earlier))),
        Row(
            "an earlier reply not there yet: readable until the earlier deadline",
            machine(unanswered: [due(3)], call(ahead: 1, awaiting: .earlier)), .nothingArrived,
            .finish(.readable(deadline: at(3))), machine(unanswered: [due(3)], call(ahead: 1))),
        Row(
            "an earlier reply due after the call: readable until the call's deadline",
            machine(unanswered: [due(9)], call(ahead: 1, awaiting: .earlier)), .nothingArrived,
            .finish(.readable(deadline: at(5))), machine(unanswered: [due(9)], call(ahead: 1))),
        Row(
            "an earlier reply not there by its deadline: failed",
            machine(unanswered: [due(3)], call(ahead: 1, awaiting: .earlier)), .nothingArrived, now: 3,
            .fail("no answer in time"), machine(unanswered: [due(3)], call(ahead: 1))),
        // Its own reply.
        Row(
            "its reply: the call ends", machine(call(awaiting: .own)), .arrived(.integer(7)),
            .finish(.reply(.integer(7))),
            machine(nil)),
        Row(
            "its own error reply (not NOSCRIPT): the call ends with it", machine(call(awaiting: .own)),
            .arrived(.error("ERR x")), .finish(.reply(.error("ERR x"))), machine(nil)),
        Row(
            "its reply not there yet: readable until its deadline", machine(call(awaiting: .own)), .nothingArrived,
            .finish(.readable(deadline: at(5))), machine(call())),
        Row(
            "its reply not there by its deadline: failed", machine(call(awaiting: .own)), .nothingArrived, now: 5.5,
            .fail("no answer in time"), machine(call())),
        Row(
            "its reply, an earlier script to send again: written after it",
            machine(call(again: [again], awaiting: .own)),
            .arrived(.integer(7)), .write(againBytes),
            machine(call(awaiting: .again(againBytes, rest: [], answer: .integer(7))))),
        Row(
            "its reply, a command held: the held one goes before the earlier script",
            machine(
                unanswered: [due(2)], held: held, heldCount: 1, heldSince: 0.5, call(again: [again], awaiting: .own)),
            .arrived(.integer(7)), .write(held + againBytes),
            machine(unanswered: [due(6)], call(awaiting: .again(held + againBytes, rest: [], answer: .integer(7))))),
        Row(
            "the earlier script written after the answer: the call ends, its reply due",
            machine(call(awaiting: .again(againBytes, rest: [], answer: .integer(7)))), .wrote(againBytes.count),
            .finish(.reply(.integer(7))), machine(unanswered: [dueAgain], nil)),
        Row(
            "one of two written after the answer: the second next",
            machine(call(awaiting: .again(againBytes, rest: [again2], answer: .integer(7)))), .wrote(againBytes.count),
            .write(RedisConnection.format(again2)),
            machine(
                unanswered: [dueAgain],
                call(awaiting: .again(RedisConnection.format(again2), rest: [], answer: .integer(7))))),
        Row(
            "an earlier script written in part after the answer: blocked, the answer and the rest kept",
            machine(call(awaiting: .again(againBytes, rest: [again2], answer: .integer(7)))), .wrote(2),
            .finish(.blocked),
            machine(
                unanswered: [dueAgain], unwritten: .init(bytes: againBytes, offset: 2),
                call(again: [again2], answer: .integer(7)))),
        // NOSCRIPT for the call itself.
        Row(
            "its NOSCRIPT: its text in full", machine(call(awaiting: .own)), .arrived(noScript), .write(full),
            machine(call(inFull: true, fullSent: true, awaiting: .full(full)))),
        Row(
            "its NOSCRIPT and an earlier one's: the earlier first, one more reply ahead",
            machine(call(again: [again], awaiting: .own)), .arrived(noScript), .write(againBytes),
            machine(call(inFull: true, ahead: 1, awaiting: .again(againBytes, rest: [], answer: nil)))),
        Row(
            "the earlier script written before its text: its text next",
            machine(call(inFull: true, ahead: 1, awaiting: .again(againBytes, rest: [], answer: nil))),
            .wrote(againBytes.count), .write(full),
            machine(unanswered: [dueAgain], call(inFull: true, ahead: 1, fullSent: true, awaiting: .full(full)))),
        Row(
            "the earlier script written in part before its text: blocked, the rest kept",
            machine(call(inFull: true, ahead: 1, awaiting: .again(againBytes, rest: [again2], answer: nil))), .wrote(0),
            .finish(.blocked),
            machine(
                unanswered: [dueAgain], unwritten: .init(bytes: againBytes, offset: 0),
                call(inFull: true, ahead: 1, again: [again2]))),
        Row(
            "its text written whole: its reply read (after the earlier one's)",
            machine(unanswered: [dueAgain], call(inFull: true, ahead: 1, fullSent: true, awaiting: .full(full))),
            .wrote(full.count), .read,
            machine(unanswered: [dueAgain], call(inFull: true, ahead: 1, fullSent: true, awaiting: .earlier))),
        Row(
            "its text written in part: blocked", machine(call(inFull: true, fullSent: true, awaiting: .full(full))),
            .wrote(5), .finish(.blocked),
            machine(unwritten: .init(bytes: full, offset: 5), call(inFull: true, fullSent: true))),
        Row(
            "NOSCRIPT again after its text in full: the reply, not a third try",
            machine(call(inFull: true, fullSent: true, awaiting: .own)), .arrived(noScript), .finish(.reply(noScript)),
            machine(nil)),
        // Out of step.
        Row("no call under way", machine(nil), .progress, .fail("no script call under way"), machine(nil)),
        Row(
            "a reply while writing: out of step", machine(call(awaiting: .call(evalsha))), .arrived(.integer(1)),
            .fail("a script call went out of step"), machine(call())),
        Row(
            "a write while reading: out of step", machine(call(awaiting: .own)), .wrote(3),
            .fail("a script call went out of step"), machine(call())),
    ]

    @Test(
        "each step of a script call: state, event, action, next state", arguments: RedisConnectionStateMachineTests.rows
    )
    func evaluationStep(_ row: Row) {
        var machine = row.state
        let action = machine.evaluation(row.event, now: Self.at(row.now))
        #expect(action == row.action)
        #expect(machine == row.next)
    }

    @Test("beginEvaluation: a call due a timeout from now, not yet sent")
    func begin() {
        var machine = Self.machine(nil)
        machine.beginEvaluation(Self.script, Self.tail, now: Self.at(1))
        #expect(machine.evaluation == Evaluation(script: Self.script, tail: Self.tail, deadline: Self.at(6)))
    }

    @Test("hold: kept back in order, its reply due a timeout from when it was held; the first sets heldSince")
    func hold() {
        var machine = Self.machine(nil)
        machine.hold(Self.held, script: nil, tail: [], now: Self.at(1))
        #expect(machine == Self.machine(unanswered: [Self.due(6)], held: Self.held, heldCount: 1, heldSince: 1, nil))
        machine.hold(Self.evalsha, script: Self.script, tail: Self.tail, now: Self.at(2))
        let second = Machine.Unanswered(script: Self.script, tail: Self.tail, deadline: Self.at(7))
        #expect(
            machine
                == Self.machine(
                    unanswered: [Self.due(6), second], held: Self.held + Self.evalsha, heldCount: 2, heldSince: 1, nil))
        #expect(machine.isHolding)
    }

    @Test("takeHeld: nothing held leaves the bytes alone; held commands go first, due a timeout from the write")
    func takeHeld() {
        var idle = Self.machine(unanswered: [Self.due(3)], nil)
        let taken = idle.takeHeld(before: [9], now: Self.at(2))
        #expect(taken == [9])
        #expect(idle == Self.machine(unanswered: [Self.due(3)], nil))
        var holding = Self.machine(
            unanswered: [Self.due(3), Self.due(4)], held: Self.held, heldCount: 1, heldSince: 0, nil)
        let all = holding.takeHeld(before: [9], now: Self.at(2))
        #expect(all == Self.held + [9])
        #expect(holding == Self.machine(unanswered: [Self.due(3), Self.due(7)], nil))
        #expect(!holding.isHolding)
    }

    @Test("wrote: whole, or the rest kept for takeUnwritten; a reply due is queued either way")
    func wrote() {
        var machine = Self.machine(nil)
        let whole = machine.wrote([1, 2, 3], written: 3, due: Self.due(4))
        #expect(whole)
        #expect(machine == Self.machine(unanswered: [Self.due(4)], nil))
        let partly = machine.wrote([4, 5, 6], written: 1, due: nil)
        #expect(!partly)
        #expect(machine.unwritten == .init(bytes: [4, 5, 6], offset: 1))
        let rest = machine.takeUnwritten()
        #expect(rest == .init(bytes: [4, 5, 6], offset: 1))
        let none = machine.takeUnwritten()
        #expect(none == nil)
        #expect(machine.writeDeadline(now: Self.at(1)) == Self.at(4))
        let first = machine.nextUnanswered()
        #expect(first == Self.due(4))
        let empty = machine.nextUnanswered()
        #expect(empty == nil)
        #expect(machine.writeDeadline(now: Self.at(1)) == Self.at(6))
    }

    @Test("again: a script's NOSCRIPT sends its text in full; any other reply, or no script, nothing")
    func againRule() {
        #expect(Machine.again(Self.earlier, Self.earlierTail, after: Self.noScript) == Self.again)
        #expect(Machine.again(Self.earlier, Self.earlierTail, after: .error("ERR NOSCRIPT")) == nil)
        #expect(Machine.again(Self.earlier, Self.earlierTail, after: .integer(1)) == nil)
        #expect(Machine.again(nil, [], after: Self.noScript) == nil)
    }
}
