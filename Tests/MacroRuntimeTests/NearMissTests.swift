import MacroRuntime
import Testing

@Suite("near misses")
struct NearMissTests {
    @Test("near misses: one step for short words, two for longer; a swap of neighbours is one step")
    func nearMiss() {
        #expect(NearMiss.distance("rnu", "run") == 1)
        #expect(NearMiss.suggestion(for: "rnu", among: ["run", "repl", "batch"]) == "run")
        #expect(NearMiss.suggestion(for: "fromat", among: ["format", "max_wait"]) == "format")
        #expect(NearMiss.suggestion(for: "yaml", among: ["table", "json", "csv", "ndjson"]) == nil)
        #expect(NearMiss.suggestion(for: "xyz", among: ["csv"]) == nil)
    }
}
