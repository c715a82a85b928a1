// The JSON decode comparison of issue 13 item 5: the native fast path
// (`JSONToPython.parse`) against `json.loads(bytes)` on the same 5 MB body,
// in one process, CPU time per pass. Built in release only with
// APIMACRO_BENCH_DECODE=1 (see Package.swift); run by Benchmarks/decode.sh.
import Glibc
import PythonBridge

func cpuSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

let arguments = CommandLine.arguments
guard arguments.count >= 2 else {
    print("usage: json-decode-bench FIXTURE.json [PASSES [native|loads]]")
    exit(2)
}
let passes = arguments.count > 2 ? Int(arguments[2]) ?? 20 : 20
// A third argument `native` or `loads` runs only that one (for instruction counts under callgrind).
let only = arguments.count > 3 ? arguments[3] : nil
try Interpreter.start()
try withGIL {
    let globals = try Interpreter.newGlobals()
    try globals.setItem("fixture", try PythonValue.string(arguments[1]).toPython())
    // A 5 MB array of recorded GitHub repository objects (octokit's fixture), ids varied.
    try Interpreter.exec(
        """
        import json
        with open(fixture) as f:
            item = json.load(f)[0]["response"]
        items, size = [], 2
        while size < 5_000_000:
            copy = dict(item, id=len(items), name=f"repo-{len(items):05d}")
            items.append(copy)
            size += len(json.dumps(copy)) + 2
        body = json.dumps(items).encode()
        loads = json.loads
        """, globals: globals)
    guard let body = try globals.item("body"), let loads = try globals.item("loads"),
        case .bytes(let bytes) = try PythonValue(python: body)
    else { fatalError("no body") }

    func measure(_ name: String, _ work: () throws -> Void) rethrows -> Double {
        try work()  // warm-up
        let start = cpuSeconds()
        for _ in 0..<passes { try work() }
        let seconds = (cpuSeconds() - start) / Double(passes)
        let rate = Double(bytes.count) / seconds / 1e6
        print(
            "\(name): \(String(format: "%.2f", seconds * 1000)) ms CPU per pass, \(String(format: "%.0f", rate)) MB/s")
        return seconds
    }
    let native =
        only == "loads"
        ? 0
        : try measure("JSONToPython.parse") {
            guard bytes.withUnsafeBufferPointer({ JSONToPython.parse($0) }) != nil else { fatalError("declined") }
        }
    let reference =
        only == "native"
        ? 0
        : try measure("json.loads(bytes)") {
            _ = try loads.call([try PythonValue.bytes(bytes).toPython()])
        }
    print(
        "body \(bytes.count) bytes, \(passes) passes; native / json.loads CPU time: \(String(format: "%.2f", native / reference))"
    )
}
