import Clients
import PythonBridge

/// One natively parallel call prepared for `apimacro.map`: everything it
/// needs is Sendable, so it runs with the GIL released.
struct ParallelCall: Sendable {
    let api: String
    let run: @Sendable () async throws -> Response
}

/// The client methods `apimacro.map` runs natively: their function object
/// (what a bound method's `__func__` is) → how to turn one item into a call.
final class ParallelMethods {
    private var table: [Int: (function: PyRef, make: (PyRef) throws -> ParallelCall)] = [:]

    func register(_ function: PyRef, _ make: @escaping (PyRef) throws -> ParallelCall) {
        table[Int(bitPattern: function.pointer)] = (function, make)
    }

    /// The maker for `callable` if it is a registered client method.
    func maker(for callable: PyRef) -> ((PyRef) throws -> ParallelCall)? {
        let function = callable.attributeIfPresent("__func__") ?? callable
        return table[Int(bitPattern: function.pointer)]?.make
    }
}

/// `apimacro.map(func, items, concurrency=8)`.
enum ParallelMap {
    static func install(in module: NativeModule, parallel: ParallelMethods, decoder: JSONDecoding) throws {
        try module.addFunction(
            "map",
            doc: """
                map(func, items, concurrency=8) -> list

                Calls func(item) for every item with up to `concurrency` calls in flight and returns the
                results in input order. Client methods such as github.user run natively in parallel; any
                other callable runs on a pool of Python threads. The first exception is raised after the
                calls in flight have finished; no new call starts after it.
                """
        ) { arguments in
            let slots = try arguments.bind("map", ["func", "items", "concurrency"], required: 2)
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
            let items = try Interpreter.import("builtins").attribute("list").call([slots[1] ?? .none])
            guard let make = parallel.maker(for: function) else {
                return try module.object.callMethod(
                    "_map_threads", [function, items, try PythonValue.int(concurrency).toPython()])
            }
            let count = PySequence.count(items)
            var calls: [ParallelCall] = []
            calls.reserveCapacity(count)
            for index in 0..<count {
                calls.append(try make(try PyRef.checked(PySequence.item(items, index))))
            }
            let limit = concurrency
            let prepared = calls
            let responses = try withoutGIL { try await run(prepared, concurrency: limit) }
            return try PySequence.list(responses.enumerated().map { try decoder.decode($0.element, api: calls[$0.offset].api) })
        }
    }

    /// Runs the calls with at most `concurrency` in flight; after the first
    /// error no new call starts, and it is thrown once the others finish.
    /// Results are collected as (index, response) pairs and put in input
    /// order at the end.
    static func run(_ calls: [ParallelCall], concurrency: Int) async throws -> [Response] {
        var collected: [(index: Int, response: Response)] = []
        collected.reserveCapacity(calls.count)
        var firstError: (any Error)?
        await withTaskGroup(of: (Int, Result<Response, any Error>).self) { group in
            var next = 0
            while next < min(concurrency, calls.count) {
                group.addTask { [index = next, call = calls[next]] in await outcome(index, call) }
                next += 1
            }
            while let (index, result) = await group.next() {
                switch result {
                case .success(let response): collected.append((index, response))
                case .failure(let error): if firstError == nil { firstError = error }
                }
                if firstError == nil, next < calls.count, !Task.isCancelled {
                    group.addTask { [index = next, call = calls[next]] in await outcome(index, call) }
                    next += 1
                }
            }
        }
        if let firstError { throw firstError }
        try Task.checkCancellation()
        guard collected.count == calls.count else { throw CancellationError() }
        return collected.sorted { $0.index < $1.index }.map(\.response)
    }

    /// One call's result, never thrown: the group keeps going until it decides to stop.
    private static func outcome(_ index: Int, _ call: ParallelCall) async -> (Int, Result<Response, any Error>) {
        do {
            return (index, .success(try await call.run()))
        } catch {
            return (index, .failure(error))
        }
    }
}
