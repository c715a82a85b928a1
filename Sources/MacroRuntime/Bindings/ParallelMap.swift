import Clients
import PythonBridge
import Synchronization
import WebAPI

/// One natively parallel call prepared for `apimacro.map`: everything it
/// needs is Sendable, so it runs with the GIL released.
struct ParallelCall: Sendable {
    let api: String
    /// Whether an empty body is None rather than a `ParseError` (a write's 204 No Content).
    var emptyIsNone = false
    let run: @Sendable () async throws -> Response
    /// What the decoded answer becomes (GIL held), as the direct call presents it (the
    /// shortener's link dict); nil keeps the decoded answer.
    var present: (@Sendable (PyRef, Response) throws -> PyRef)? = nil
}

/// The client methods `apimacro.map` runs natively: their function object
/// (what a bound method's `__func__` is) → how to turn the method's arguments
/// into a call.
///
/// A registration builds its request with the very route builder the sequential
/// method uses, so a call through `map` sends what the same call made directly
/// would: every argument, `params` and `headers` included.
final class ParallelMethods {
    private var table: [Int: (function: PyRef, make: (PyRef?, PyArguments) throws -> ParallelCall)] = [:]
    /// Sees a native `map`'s calls before they run (the progress line wraps them), and its end.
    var observe: ([ParallelCall]) -> [ParallelCall] = { $0 }
    var finished: () -> Void = {}

    /// `make` receives the instance the method was bound to (`github`, or the client
    /// `github.as_account("work")` returned: the call must go with that one's account), and the arguments.
    func register(_ function: PyRef, _ make: @escaping (PyRef?, PyArguments) throws -> ParallelCall) {
        table[Int(bitPattern: function.pointer)] = (function, make)
    }

    /// How one item becomes a call, if `callable` is a registered client method or a
    /// `functools.partial` of one (`partial(github.get, params={...})`): the partial's
    /// arguments come first, then the item, then the partial's keywords.
    func maker(for callable: PyRef) -> ((PyRef) throws -> ParallelCall)? {
        var target = callable
        var leading: [PyRef] = []
        var keywords: [(String, PyRef)] = []
        if let partial = try? Interpreter.import("functools").attribute("partial"),
            (try? callable.isInstance(of: partial)) == true
        {
            guard let function = callable.attributeIfPresent("func"), let bound = Self.partialArguments(callable) else {
                PythonRaise.clear()
                return nil
            }
            target = function
            (leading, keywords) = bound
        }
        PythonRaise.clear()
        let function = target.attributeIfPresent("__func__") ?? target
        let receiver = target.attributeIfPresent("__self__")
        PythonRaise.clear()
        guard let make = table[Int(bitPattern: function.pointer)]?.make else { return nil }
        return { item in try make(receiver, PyArguments(positional: leading + [item], keywords: keywords)) }
    }

    /// A partial's positional arguments and keywords, or nil when they cannot be read.
    private static func partialArguments(_ partial: PyRef) -> (positional: [PyRef], keywords: [(String, PyRef)])? {
        do {
            let list = try Interpreter.import("builtins").attribute("list")
            let positional = try list.call([partial.attribute("args")])
            let items = try list.call([partial.attribute("keywords").callMethod("items")])
            var arguments: [PyRef] = []
            for index in 0..<max(0, PySequence.count(positional)) {
                arguments.append(try PyRef.checked(PySequence.item(positional, index)))
            }
            var keywords: [(String, PyRef)] = []
            for index in 0..<max(0, PySequence.count(items)) {
                let pair = try list.call([PyRef.checked(PySequence.item(items, index))])
                let key = try String(pythonString: PyRef.checked(PySequence.item(pair, 0)))
                keywords.append((key, try PyRef.checked(PySequence.item(pair, 1))))
            }
            return (arguments, keywords)
        } catch {
            return nil
        }
    }
}

/// `apimacro.map(func, items, concurrency=8, *, return_exceptions=False)`.
enum ParallelMap {
    /// Wraps every registered client method's call so that a long `map` shows how many calls
    /// are done on the progress line (with the requests so far and the rate limit left).
    static func showProgress(parallel: ParallelMethods, progress: ProgressLine, log: ExchangeLog) {
        parallel.observe = { calls in
            let done = Atomic<Int>(0)
            let total = calls.count
            progress.begin()
            return calls.map { call in
                ParallelCall(api: call.api) {
                    let response = try await call.run()
                    let finished = done.add(1, ordering: .relaxed).newValue
                    progress.update(
                        "map: \(ProgressLine.count(finished)) of \(ProgressLine.count(total)) done · "
                            + "\(ProgressLine.count(log.requests)) requests"
                            + (RateLimitInfo(headers: response.headers)?.remaining.map {
                                " · rate limit \(ProgressLine.count($0)) left"
                            } ?? ""))
                    return response
                }
            }
        }
        parallel.finished = { progress.erase() }
    }

    static func install(in module: NativeModule, parallel: ParallelMethods, decoder: JSONDecoding) throws {
        try module.addFunction(
            "map",
            doc: """
                map(func, items, concurrency=8, *, return_exceptions=False) -> list

                Calls func(item) for every item with up to `concurrency` calls in flight and returns the
                results in input order. Client methods such as github.user and github.get (also wrapped in
                functools.partial, e.g. partial(github.get, params={...})) run natively in parallel, with
                every argument the direct call takes; any other callable runs on a pool of Python threads.
                The first exception is raised after the calls in flight have finished; no new call starts
                after it. With return_exceptions=True (as asyncio.gather) every call runs and a call that
                raised an Exception gives that exception object in its place in the list; Ctrl-C and the
                macro's timeout still stop the map.
                """
        ) { arguments in
            let slots = try arguments.bind(
                "map", ["func", "items", "concurrency", "return_exceptions"], required: 2, positionalLimit: 3)
            guard let function = slots[0], function.isCallable else {
                throw ArgumentError("map() argument 'func' must be callable, not \(slots[0]?.typeName ?? "missing")")
            }
            var concurrency = 8
            if let given = slots[2], !given.isNone {
                guard case .int(let number) = try PythonValue(python: given), number >= 1 else {
                    throw ArgumentError("map() argument 'concurrency' must be an int of at least 1")
                }
                concurrency = number
            }
            let truth = try Interpreter.import("builtins").attribute("bool")
            let returnExceptions =
                try slots[3].map { try PythonValue(python: truth.call([$0])) == .bool(true) } ?? false
            let items = try Interpreter.import("builtins").attribute("list").call([slots[1] ?? .none])
            guard let make = parallel.maker(for: function) else {
                return try module.object.callMethod(
                    "_map_threads",
                    [function, items, try PythonValue.int(concurrency).toPython(), .bool(returnExceptions)])
            }
            let count = PySequence.count(items)
            var calls: [ParallelCall] = []
            calls.reserveCapacity(count)
            for index in 0..<count {
                calls.append(try make(try PyRef.checked(PySequence.item(items, index))))
            }
            let limit = concurrency
            let prepared = parallel.observe(calls)
            defer { parallel.finished() }
            // A call's answer as the macro sees it: decoded, then shaped as its method shapes it.
            func result(_ index: Int, _ response: Response) throws -> PyRef {
                if calls[index].emptyIsNone && response.body.isEmpty { return .none }
                let decoded = try decoder.decode(response, api: calls[index].api)
                return try calls[index].present?(decoded, response) ?? decoded
            }
            guard returnExceptions else {
                let responses = try withoutGIL { try await run(prepared, concurrency: limit) }
                return try PySequence.list(responses.enumerated().map { try result($0.offset, $0.element) })
            }
            let outcomes = try withoutGIL { try await runAll(prepared, concurrency: limit) }
            return try PySequence.list(
                outcomes.enumerated().map { index, outcome in
                    do {
                        return try result(index, try outcome.get())
                    } catch {
                        return try exceptionObject(error)
                    }
                })
        }
    }

    /// Runs the calls with at most `concurrency` in flight; after the first
    /// error no new call starts, and it is thrown once the others finish.
    ///
    /// The calls run on the waiting Python thread's executor (`withoutGIL`), like the task
    /// that runs them: their stages run on that thread, each suspends on its transfer, and
    /// the thread, waiting with the GIL released, drives every transfer in flight through
    /// its one `curl_multi` (no hand-off to another thread and back).
    /// Results are collected as (index, response) pairs and put in input
    /// order at the end.
    static func run(_ calls: [ParallelCall], concurrency: Int) async throws -> [Response] {
        let (outcomes, firstError) = await outcomes(calls, concurrency: concurrency, stopAtFirstError: true)
        if let firstError { throw firstError }
        try Task.checkCancellation()
        return try outcomes.map { outcome in
            guard let outcome else { throw CancellationError() }
            return try outcome.get()
        }
    }

    /// Runs every call, at most `concurrency` in flight, and returns each one's outcome in
    /// input order (`map(..., return_exceptions=True)`); a cancellation (Ctrl-C, the macro's
    /// timeout) is thrown instead.
    static func runAll(_ calls: [ParallelCall], concurrency: Int) async throws -> [Result<Response, any Error>] {
        let (outcomes, _) = await outcomes(calls, concurrency: concurrency, stopAtFirstError: false)
        try Task.checkCancellation()
        return try outcomes.map { outcome in
            guard let outcome else { throw CancellationError() }
            if case .failure(let error as APIError) = outcome, error.kind == .cancelled { throw error }
            return outcome
        }
    }

    /// The calls' outcomes in input order (nil for a call never started) and the first error
    /// in the order they ended; with `stopAtFirstError`, no call starts after it.
    private static func outcomes(_ calls: [ParallelCall], concurrency: Int, stopAtFirstError: Bool) async -> (
        [Result<Response, any Error>?], (any Error)?
    ) {
        var collected = [Result<Response, any Error>?](repeating: nil, count: calls.count)
        var firstError: (any Error)?
        await withTaskGroup(of: (Int, Result<Response, any Error>).self) { group in
            var next = 0
            while next < min(concurrency, calls.count) {
                group.addTask { [index = next, call = calls[next]] in
                    await outcome(index, call)
                }
                next += 1
            }
            while let (index, result) = await group.next() {
                collected[index] = result
                if case .failure(let error) = result, firstError == nil { firstError = error }
                let stopped = stopAtFirstError && firstError != nil
                if !stopped, next < calls.count, !Task.isCancelled {
                    group.addTask { [index = next, call = calls[next]] in
                        await outcome(index, call)
                    }
                    next += 1
                }
            }
        }
        return (collected, firstError)
    }

    /// One call's result, never thrown: the group keeps going until it decides to stop.
    private static func outcome(_ index: Int, _ call: ParallelCall) async -> (Int, Result<Response, any Error>) {
        do {
            return (index, .success(try await call.run()))
        } catch {
            return (index, .failure(error))
        }
    }

    /// The Python exception object `error` raises, to put in `map`'s list (GIL held); an error
    /// that is no `Exception` (a `KeyboardInterrupt`) is raised instead.
    private static func exceptionObject(_ error: any Error) throws -> PyRef {
        PythonRaise.error(error)
        guard let (_, value, _) = PythonException.fetchRaw(), let value else { throw PythonErrorSet() }
        let exception = try Interpreter.import("builtins").attribute("Exception")
        guard try value.isInstance(of: exception) else {
            PythonRaise.instance(value)
            throw PythonErrorSet()
        }
        // No traceback: the exception was made here, not raised through the macro's frames.
        try value.setAttribute("__traceback__", .none)
        return value
    }
}
