import Testing

@testable import WebAPI

/// The governor's rules alone, without Redis or a clock.
///
/// `GovernorStage.StateMachine`: each row is a state, an event, the action expected and the
/// state after it.
@Suite("the governor's state machine, transition by transition")
struct GovernorStateMachineTests {
    typealias Machine = GovernorStage.StateMachine

    /// A reserve script's reply: its code, then its values.
    static func reply(_ code: Int64, _ values: RedisReply...) -> RedisReply {
        .array([.integer(code)] + values)
    }

    struct Row: Sendable, CustomTestStringConvertible {
        let name: String
        let state: Machine.State
        let event: Machine.Event
        let action: Machine.Action?
        let next: Machine.State
        var testDescription: String { name }
    }

    static let resource = RedisReply.string(Array("core".utf8))

    static let rows: [Row] = [
        Row(
            name: "Redis not usable: sent without the governor", state: .reserving(waited: 0), event: .reply(nil),
            action: .sendUngoverned, next: .done),
        Row(
            name: "a reply that is not an array with a code: sent without the governor", state: .reserving(waited: 0),
            event: .reply(.error("ERR x")), action: .sendUngoverned, next: .done),
        Row(
            name: "an empty array: sent without the governor", state: .reserving(waited: 3),
            event: .reply(.array([])), action: .sendUngoverned, next: .done),
        Row(
            name: "reserved (0): sent, its resource kept", state: .reserving(waited: 0),
            event: .reply(reply(0, resource)),
            action: .send(.init(probe: false, resource: Array("core".utf8))), next: .done),
        Row(
            name: "reserved as the probe (3)", state: .reserving(waited: 2), event: .reply(reply(3, resource)),
            action: .send(.init(probe: true, resource: Array("core".utf8))), next: .done),
        Row(
            name: "reserved without a resource: empty", state: .reserving(waited: 0), event: .reply(reply(0)),
            action: .send(.init(probe: false, resource: [])), next: .done),
        Row(
            name: "spent (2), the reset 9 s after Redis's clock: waits 10 s", state: .reserving(waited: 0),
            event: .reply(reply(2, .integer(1_700_000_010), .integer(1_700_000_001_000))), action: .sleep(10),
            next: .sleeping(waited: 0, seconds: 10, measured: false)),
        Row(
            name: "spent, the reset a string of digits", state: .reserving(waited: 0),
            event: .reply(reply(2, .string(Array("1700000010".utf8)), .integer(1_700_000_005_000))), action: .sleep(6),
            next: .sleeping(waited: 0, seconds: 6, measured: false)),
        Row(
            name: "spent, the reset passed: waits 1 s", state: .reserving(waited: 0),
            event: .reply(reply(2, .integer(1_700_000_000), .integer(1_700_000_100_000))), action: .sleep(1),
            next: .sleeping(waited: 0, seconds: 1, measured: false)),
        Row(
            name: "spent, the wait just fits APIMACRO_MAX_WAIT (60 s) with 50 s waited", state: .reserving(waited: 50),
            event: .reply(reply(2, .integer(1_700_000_009), .integer(1_700_000_000_000))), action: .sleep(10),
            next: .sleeping(waited: 50, seconds: 10, measured: false)),
        Row(
            name: "spent, the wait does not fit: refused with the reset", state: .reserving(waited: 51),
            event: .reply(reply(2, .integer(1_700_000_009), .integer(1_700_000_000_000))),
            action: .refuseSpent(reset: 1_700_000_009, seconds: 10), next: .done),
        Row(
            name: "spent, a reset in milliseconds: the longest wait, refused", state: .reserving(waited: 0),
            event: .reply(reply(2, .integer(1_700_000_000_000), .integer(1_700_000_000_000))),
            action: .refuseSpent(reset: 1_700_000_000_000, seconds: RateLimitPolicy.longestWait), next: .done),
        Row(
            name: "paced (1): waits the microseconds named", state: .reserving(waited: 0),
            event: .reply(reply(1, .integer(250_000))), action: .sleep(0.25),
            next: .sleeping(waited: 0, seconds: 0.25, measured: true)),
        Row(
            name: "paced, 0 µs: at least 1 µs", state: .reserving(waited: 0), event: .reply(reply(1, .integer(0))),
            action: .sleep(0.000_001), next: .sleeping(waited: 0, seconds: 0.000_001, measured: true)),
        Row(
            name: "paced, an hour named: one wait is at most a second", state: .reserving(waited: 0),
            event: .reply(reply(4, .integer(3_600_000_000))), action: .sleep(1),
            next: .sleeping(waited: 0, seconds: 1, measured: true)),
        Row(
            name: "paced without a wait: 10 ms", state: .reserving(waited: 0), event: .reply(reply(1)),
            action: .sleep(0.01), next: .sleeping(waited: 0, seconds: 0.01, measured: true)),
        Row(
            name: "paced past APIMACRO_MAX_WAIT: refused with the waits so far", state: .reserving(waited: 59.9),
            event: .reply(reply(1, .integer(500_000))), action: .refuseWaited(waited: 59.9, seconds: 0.5), next: .done),
        Row(
            name: "a reset wait over: counts as asked, however long it took",
            state: .sleeping(
                waited: 5, seconds: 10, measured: false), event: .slept(took: 30), action: .reserve,
            next: .reserving(waited: 15)),
        Row(
            name: "a pace wait over, shorter than asked: counts as asked",
            state: .sleeping(waited: 1, seconds: 0.5, measured: true), event: .slept(took: 0.2), action: .reserve,
            next: .reserving(waited: 1.5)),
        Row(
            name: "a pace wait over, longer than asked: counts as long as it took",
            state: .sleeping(waited: 1, seconds: 0.000_001, measured: true), event: .slept(took: 0.25),
            action: .reserve,
            next: .reserving(waited: 1.25)),
        Row(
            name: "a reply while sleeping: nothing", state: .sleeping(waited: 0, seconds: 1, measured: true),
            event: .reply(reply(0)), action: nil, next: .sleeping(waited: 0, seconds: 1, measured: true)),
        Row(
            name: "a sleep's end while reserving: nothing", state: .reserving(waited: 2), event: .slept(took: 1),
            action: nil, next: .reserving(waited: 2)),
        Row(name: "done: a reply changes nothing", state: .done, event: .reply(reply(0)), action: nil, next: .done),
        Row(
            name: "done: a sleep's end changes nothing", state: .done, event: .slept(took: 1), action: nil, next: .done),
    ]

    @Test("each transition: state, event, action, next state", arguments: GovernorStateMachineTests.rows)
    func transition(_ row: Row) {
        var machine = Machine(maxWait: 60, state: row.state)
        let action = machine.receive(row.event)
        #expect(action == row.action)
        #expect(machine.state == row.next)
    }

    @Test("a run of events: spent, paced, then reserved, the waits adding up")
    func run() {
        var machine = Machine(maxWait: 60)
        #expect(machine.state == .reserving(waited: 0))
        let step2 = machine.receive(.reply(Self.reply(2, .integer(1_700_000_029), .integer(1_700_000_000_000))))
        #expect(step2 == .sleep(30))
        let step3 = machine.receive(.slept(took: 30.2))
        #expect(step3 == .reserve)
        let step4 = machine.receive(.reply(Self.reply(1, .integer(1_000_000))))
        #expect(step4 == .sleep(1))
        let step5 = machine.receive(.slept(took: 2))
        #expect(step5 == .reserve)
        #expect(machine.state == .reserving(waited: 32))
        let step6 = machine.receive(.reply(Self.reply(2, .integer(1_700_000_028), .integer(1_700_000_000_000))))
        #expect(step6 == .refuseSpent(reset: 1_700_000_028, seconds: 29))
        #expect(machine.state == .done)
    }

    struct HoldRow: Sendable {
        let probe: Bool
        let maxConcurrency: Int?
        let answered: Bool
        let remaining: Int?
        let holds: Bool
    }

    @Test(
        "a record is held back only for a routine answer",
        arguments: [
            HoldRow(probe: false, maxConcurrency: nil, answered: true, remaining: 10, holds: true),
            HoldRow(probe: false, maxConcurrency: 0, answered: true, remaining: nil, holds: true),
            HoldRow(probe: true, maxConcurrency: nil, answered: true, remaining: 10, holds: false),
            HoldRow(probe: false, maxConcurrency: 4, answered: true, remaining: 10, holds: false),
            HoldRow(probe: false, maxConcurrency: nil, answered: false, remaining: nil, holds: false),
            HoldRow(probe: false, maxConcurrency: nil, answered: true, remaining: 0, holds: false),
        ])
    func holdsRecord(_ row: HoldRow) {
        #expect(
            Machine.holdsRecord(
                probe: row.probe, maxConcurrency: row.maxConcurrency, answered: row.answered, remaining: row.remaining)
                == row.holds)
    }
}
