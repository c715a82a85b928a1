import CJQ
import Platform
import WebAPI

/// The child process that runs an `apimacro api --jq` filter (and formats JSON for the
/// terminal): the apimacro binary started again as `apimacro __apimacro_jq MODE PROGRAM
/// [OPTIONS]` by `JQProcess`, with an empty environment, no core dumps and a memory limit.
///
/// A jq program can loop or allocate without end (`[range(1e18)]`, `repeat(.)`), and jq 1.6
/// traps on some inputs of its own (deep values printed recursively): in a child, the worst a
/// filter can do is be killed at its deadline or die, and the process that holds the user's
/// tokens reports it. libjq is opened here only (with dlopen: no other command maps it).
///
/// Modes: `check` compiles PROGRAM and exits; `run` reads JSON texts from stdin (what the
/// server sent, already redacted) and writes each result of PROGRAM on stdout.
public enum JQChild {
    /// The first argument that makes `apimacro` this child.
    public static let argument = "__apimacro_jq"

    /// How the child ends; `JQProcess` reads them.
    enum Status: Int32 {
        case success = 0
        /// The program does not compile: jq's messages are on stderr.
        case compileError = 3
        /// jq ran out of memory (its allocation failed under the child's limit).
        case outOfMemory = 4
        /// The program raised an error on some input (`error`, `.a` of a number): on stderr.
        case runtimeError = 5
        /// stdin is not JSON.
        case invalidInput = 6
        /// libjq could not be opened.
        case noLibrary = 7
        /// The child was started with arguments it does not know.
        case usage = 8
    }

    /// What `run` does with its input and results.
    struct Options: Equatable {
        /// Merge the inputs (pages) into one array before the program runs: an array page's
        /// items, an object page's list at `merge` (when it is a list), else the page itself.
        var merge: [String]?
        /// Indent by two spaces (a terminal).
        var pretty = false
        /// jq's colours (a terminal that takes them).
        var color = false
        /// A string result is written as its text, not as JSON (as `gh api --jq` and `jq -r`).
        var rawStrings = false
        /// Control characters of raw strings are shown escaped (`\x1b`): stdout is a terminal,
        /// which a server's text must not drive.
        var sanitize = false
        /// The most memory the child may allocate, in bytes (`APIMACRO_JQ_MEMORY`, else
        /// `defaultMemoryLimit`).
        var memoryLimit = JQChild.defaultMemoryLimit

        /// The options as the child's arguments.
        var arguments: [String] {
            var arguments: [String] = []
            if let merge { arguments += ["--merge", merge.joined(separator: ".")] }
            if pretty { arguments.append("--pretty") }
            if color { arguments.append("--color") }
            if rawStrings { arguments.append("--raw") }
            if sanitize { arguments.append("--sanitize") }
            if memoryLimit != JQChild.defaultMemoryLimit { arguments += ["--memory", String(memoryLimit)] }
            return arguments
        }

        /// Reads `arguments` back; nil for one it does not know.
        init?(arguments: ArraySlice<String>) {
            var index = arguments.startIndex
            while index < arguments.endIndex {
                switch arguments[index] {
                case "--merge":
                    index += 1
                    guard index < arguments.endIndex else { return nil }
                    merge = arguments[index].isEmpty ? [] : JSONPath.split(arguments[index])
                case "--pretty": pretty = true
                case "--color": color = true
                case "--raw": rawStrings = true
                case "--sanitize": sanitize = true
                case "--memory":
                    index += 1
                    guard index < arguments.endIndex, let bytes = UInt64(arguments[index]) else { return nil }
                    memoryLimit = bytes
                default: return nil
                }
                index += 1
            }
        }

        init(
            merge: [String]? = nil, pretty: Bool = false, color: Bool = false, rawStrings: Bool = false,
            sanitize: Bool = false, memoryLimit: UInt64 = JQChild.defaultMemoryLimit
        ) {
            self.merge = merge
            self.pretty = pretty
            self.color = color
            self.rawStrings = rawStrings
            self.sanitize = sanitize
            self.memoryLimit = memoryLimit
        }
    }

    /// jq's colours (`JQ_COLORS`' order: null, false, true, numbers, strings, arrays, objects).
    static let colors = "0;90:0;39:0;39:0;39:0;32:1;39:1;39"

    /// The most memory a filter's child may allocate: 4 GiB, or half the machine's memory when
    /// that is less (16 times the largest body apimacro accepts, 256 MiB).
    ///
    /// `APIMACRO_JQ_MEMORY` (MiB) sets another, of at least `smallestMemoryLimit`.
    static var defaultMemoryLimit: UInt64 {
        min(4 << 30, ProcessInfo.processInfo.physicalMemory / 2)
    }

    /// The smallest limit `APIMACRO_JQ_MEMORY` takes, in MiB: what the child needs to start and
    /// run a small filter.
    public static let smallestMemoryLimit = 32

    /// The limit in bytes for `APIMACRO_JQ_MEMORY`'s MiB, else the default.
    static func memoryLimit(mebibytes: Int?) -> UInt64 {
        mebibytes.map { UInt64($0) << 20 } ?? defaultMemoryLimit
    }

    /// Runs the child with `arguments` (those after `argument`) and ends the process.
    public static func main(_ arguments: [String]) -> Never {
        // Read by the Swift runtime at start (it keeps a crash from printing a report for seconds);
        // gone now, so jq's `env` and `$ENV` see no variable at all.
        unsetenv("SWIFT_BACKTRACE")
        // A filter that dies leaves no core file behind.
        var noCore = rlimit(rlim_cur: 0, rlim_max: 0)
        setrlimit(Int32(RLIMIT_CORE.rawValue), &noCore)
        guard arguments.count >= 2, ["check", "run"].contains(arguments[0]),
            let options = Options(arguments: arguments.dropFirst(2))
        else {
            var memory = rlimit(rlim_cur: rlim_t(defaultMemoryLimit), rlim_max: rlim_t(defaultMemoryLimit))
            setrlimit(Int32(RLIMIT_DATA.rawValue), &memory)
            fail(
                .usage,
                "apimacro: \(argument) takes check|run PROGRAM [--merge PATH] [--pretty] [--color] [--raw] "
                    + "[--sanitize] [--memory BYTES]")
        }
        // It may allocate at most `options.memoryLimit` (set before libjq is opened).
        var memory = rlimit(rlim_cur: rlim_t(options.memoryLimit), rlim_max: rlim_t(options.memoryLimit))
        setrlimit(Int32(RLIMIT_DATA.rawValue), &memory)
        var table = cjq_api()
        guard cjq_load("libjq.so.1", &table) == 0 else {
            fail(.noLibrary, "apimacro: --jq needs libjq (Debian's libjq1): apt-get install libjq1")
        }
        let jq = JQRun(table: table, options: options)
        jq.compile(arguments[1])
        if arguments[0] == "check" { exit(Status.success.rawValue) }
        exit(jq.run().rawValue)
    }

    /// Writes `message` on stderr and exits with `status`.
    static func fail(_ status: Status, _ message: String) -> Never {
        StandardStreams.error(message + "\n")
        exit(status.rawValue)
    }
}

/// jq's state in the child: the compiled program, the options, the first error seen.
private final class JQRun {
    var table: cjq_api
    let options: JQChild.Options
    /// Where results go: stdout, through stdio's buffer (`exit` flushes it).
    private let output: UnsafeMutablePointer<FILE>
    private var state: OpaquePointer?
    private var failed = false

    init(table: cjq_api, options: JQChild.Options) {
        self.table = table
        self.options = options
        guard let output = fdopen(STDOUT_FILENO, "w") else { JQChild.fail(.usage, "apimacro: --jq: no stdout") }
        self.output = output
        // The colours `apimacro.output` uses for JSON (`_output.py`'s JSON_COLORS): jq 1.6's, but
        // null grey rather than bold black, which a dark terminal does not show.
        _ = cjq_set_colors(&self.table, JQChild.colors)
        cjq_nomem_handler(&self.table, JQRun.outOfMemory, nil)
    }

    /// An allocation jq cannot make ends the child with its own status, not jq's abort().
    /// (The parent says so: nothing that allocates runs here.)
    static let outOfMemory: @convention(c) (UnsafeMutableRawPointer?) -> Void = { _ in
        _exit(JQChild.Status.outOfMemory.rawValue)
    }

    /// Compiles `program`, or exits with jq's messages.
    func compile(_ program: String) {
        guard let state = cjq_init(&table) else { JQChild.fail(.outOfMemory, "apimacro: --jq: out of memory") }
        self.state = state
        // jq_init and jq_start install the state's own handler (none): it is set on the state.
        cjq_set_nomem_handler(&table, state, JQRun.outOfMemory, nil)
        cjq_set_error_cb(
            &table, state,
            { data, message in
                guard let data else { return }
                Unmanaged<JQRun>.fromOpaque(data).takeUnretainedValue().report(message)
            }, Unmanaged.passUnretained(self).toOpaque())
        guard cjq_compile(&table, state, program) != 0 else { exit(JQChild.Status.compileError.rawValue) }
    }

    /// Writes one of jq's messages (a string, or any value as JSON) on stderr.
    func report(_ message: jv) {
        let text =
            cjq_get_kind(&table, message) == JV_KIND_STRING
            ? string(message) : "jq: error (not a string): " + dumped(message)
        StandardStreams.error(text + "\n")
    }

    /// Reads every JSON text on stdin and runs the program on each (or once on them merged).
    func run() -> JQChild.Status {
        guard let parser = cjq_parser_new(&table, 0) else { return .outOfMemory }
        defer { cjq_parser_free(&table, parser) }
        var merged = options.merge == nil ? nil : cjq_array(&table)
        // jq's parser reads the buffer until it asks for more: one buffer that never moves.
        let size = 1 << 16
        let chunk = UnsafeMutablePointer<CChar>.allocate(capacity: size)
        defer { chunk.deallocate() }
        var done = false
        while !done {
            let count = read(0, chunk, size)
            if count < 0 && errno == EINTR { continue }
            done = count <= 0
            cjq_parser_set_buf(&table, parser, chunk, Int32(max(count, 0)), done ? 0 : 1)
            while true {
                let value = cjq_parser_next(&table, parser)
                guard cjq_get_kind(&table, value) != JV_KIND_INVALID else {
                    if cjq_invalid_has_msg(&table, cjq_copy(&table, value)) != 0 {
                        let message = string(cjq_invalid_get_msg(&table, value))
                        StandardStreams.error("apimacro: --jq: the response is not JSON: \(message)\n")
                        return .invalidInput
                    }
                    cjq_free(&table, value)
                    break
                }
                if let page = merged {
                    merged = merge(page, value)
                } else if let halt = filter(value) {
                    return halt
                }
            }
        }
        if let merged, let halt = filter(merged) { return halt }
        fflush(output)
        return failed ? .runtimeError : .success
    }

    /// `page` added to the merged array `merged`.
    private func merge(_ merged: jv, _ page: jv) -> jv {
        if cjq_get_kind(&table, page) == JV_KIND_ARRAY { return cjq_array_concat(&table, merged, page) }
        if cjq_get_kind(&table, page) == JV_KIND_OBJECT, let path = options.merge, !path.isEmpty {
            var keys = cjq_array(&table)
            for key in path { keys = cjq_array_append(&table, keys, cjq_string(&table, key)) }
            let items = cjq_getpath(&table, cjq_copy(&table, page), keys)
            if cjq_get_kind(&table, items) == JV_KIND_ARRAY {
                cjq_free(&table, page)
                return cjq_array_concat(&table, merged, items)
            }
            cjq_free(&table, items)
        }
        return cjq_array_append(&table, merged, page)
    }

    /// Runs the program on `input` and writes each result; after `halt` or `halt_error`, the
    /// status the child ends with (the program's exit code is written with `exit` by `main`).
    private func filter(_ input: jv) -> JQChild.Status? {
        guard let state else { return nil }
        cjq_start(&table, state, input, 0)
        while true {
            let result = cjq_next(&table, state)
            guard cjq_get_kind(&table, result) != JV_KIND_INVALID else {
                if cjq_invalid_has_msg(&table, cjq_copy(&table, result)) != 0 {
                    let message = cjq_invalid_get_msg(&table, result)
                    failed = true
                    if cjq_get_kind(&table, message) == JV_KIND_STRING {
                        let text = string(message)
                        StandardStreams.error("jq: error: \(text)\n")
                    } else {
                        report(message)
                    }
                } else {
                    cjq_free(&table, result)
                }
                return halted(state)
            }
            emit(result)
        }
    }

    /// After `halt` or `halt_error`: its message on stderr, and the process ends with its code
    /// (jq's own rule: none is 0, a number is that number, anything else 5); nil when the
    /// program did not halt.
    private func halted(_ state: OpaquePointer) -> JQChild.Status? {
        guard cjq_halted(&table, state) != 0 else { return nil }
        let message = cjq_get_error_message(&table, state)
        switch cjq_get_kind(&table, message) {
        case JV_KIND_STRING: StandardStreams.error(string(message))
        case JV_KIND_INVALID: cjq_free(&table, message)
        default: StandardStreams.error(dumped(message) + "\n")
        }
        let code = cjq_get_exit_code(&table, state)
        fflush(output)
        switch cjq_get_kind(&table, code) {
        case JV_KIND_INVALID:
            cjq_free(&table, code)
            exit(0)
        case JV_KIND_NUMBER:
            let number = cjq_number_value(&table, code)
            exit(number.isFinite ? Int32(truncatingIfNeeded: Int(max(-1e9, min(1e9, number)))) : 5)
        default:
            cjq_free(&table, code)
            exit(5)
        }
    }

    /// Writes one result and a newline on stdout.
    private func emit(_ value: jv) {
        if options.rawStrings, cjq_get_kind(&table, value) == JV_KIND_STRING {
            let length = Int(cjq_string_length_bytes(&table, cjq_copy(&table, value)))
            if let text = cjq_string_value(&table, value) {
                text.withMemoryRebound(to: UInt8.self, capacity: length) { bytes in
                    let raw = UnsafeBufferPointer(start: bytes, count: length)
                    if options.sanitize {
                        let shown = TerminalText.escapingControls(Array(raw))
                        _ = shown.withUnsafeBufferPointer { fwrite($0.baseAddress, 1, $0.count, output) }
                    } else {
                        _ = fwrite(raw.baseAddress, 1, raw.count, output)
                    }
                }
            }
            cjq_free(&table, value)
        } else {
            var flags = options.pretty ? cjq_indent_flags(2) : 0
            if options.color { flags |= Int32(JV_PRINT_COLOR.rawValue) }
            if options.sanitize {
                // jq escapes C0 in strings, not DEL or C1: those become JSON escapes too.
                let text = Array(string(cjq_dump_string(&table, value, flags)).utf8)
                let shown = TerminalText.escapingControls(text, json: true)
                _ = shown.withUnsafeBufferPointer { fwrite($0.baseAddress, 1, $0.count, output) }
            } else {
                cjq_dumpf(&table, value, output, flags)
            }
        }
        fputc(0x0A, output)
    }

    /// A jv string's text (consumes it).
    private func string(_ value: jv) -> String {
        let length = Int(cjq_string_length_bytes(&table, cjq_copy(&table, value)))
        defer { cjq_free(&table, value) }
        guard let text = cjq_string_value(&table, value) else { return "" }
        return text.withMemoryRebound(to: UInt8.self, capacity: length) {
            String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
        }
    }

    /// Any jv as compact JSON (consumes it).
    private func dumped(_ value: jv) -> String {
        string(cjq_dump_string(&table, value, 0))
    }
}
