// The JSON decode comparison of issue 13 item 5: the native fast path
// (`JSONToPython.parse`) against `json.loads(bytes)` on the same 5 MB body,
// in one process, CPU time per pass. Built in release only with
// APIMACRO_BENCH_DECODE=1 (see Package.swift); run by Benchmarks/decode.sh.
import Glibc
import PythonBridge

/// `value` with `places` decimals (no Foundation here for `String(format:)`).
func fixed(_ value: Double, _ places: Int) -> String {
    var scale = 1.0
    for _ in 0..<places { scale *= 10 }
    let scaled = Int((value * scale).rounded())
    let whole = String(scaled / Int(scale))
    guard places > 0 else { return whole }
    let fraction = String(abs(scaled) % Int(scale))
    return whole + "." + String(repeating: "0", count: places - fraction.count) + fraction
}

func cpuSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

let arguments = CommandLine.arguments
guard arguments.count >= 2 else {
    print("usage: json-decode-bench FIXTURE.json [PASSES [native|loads]] | PAGE.json PASSES scan")
    exit(2)
}
let passes = arguments.count > 2 ? Int(arguments[2]) ?? 20 : 20
// A third argument `native` or `loads` runs only that one (for instruction counts under callgrind).
let only = arguments.count > 3 ? arguments[3] : nil
// `scan`: only `JSONTape.scan` of the file as it is (a pagination page: Benchmarks/harness.py's
// pages/page-N.json), no Python; what a page ahead costs its fetching thread (callgrind it).
if only == "scan" {
    guard let file = fopen(arguments[1], "rb") else { fatalError("cannot open \(arguments[1])") }
    var page: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let read = fread(&chunk, 1, chunk.count, file)
        if read == 0 { break }
        page += chunk[0..<read]
    }
    fclose(file)
    var scanned = 0
    let start = cpuSeconds()
    for _ in 0..<passes {
        guard let tape = JSONTape.scan(page) else { fatalError("the scan declined \(arguments[1])") }
        _ = tape
        scanned += 1
    }
    let seconds = (cpuSeconds() - start) / Double(max(passes, 1))
    print("JSONTape.scan: \(fixed(seconds * 1000, 3)) ms CPU per pass, \(page.count) bytes, \(passes) passes")
    exit(scanned == passes ? 0 : 1)
}
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
            "\(name): \(fixed(seconds * 1000, 2)) ms CPU per pass, \(fixed(rate, 0)) MB/s")
        return seconds
    }
    let native =
        only == "loads"
        ? 0
        : measure("JSONToPython.parse") {
            guard bytes.withUnsafeBufferPointer({ JSONToPython.parse($0) }) != nil else { fatalError("declined") }
        }
    let reference =
        only == "native"
        ? 0
        : try measure("json.loads(bytes)") {
            _ = try loads.call([try PythonValue.bytes(bytes).toPython()])
        }
    print(
        "body \(bytes.count) bytes, \(passes) passes; native / json.loads CPU time: \(fixed(native / reference, 2))"
    )
}
