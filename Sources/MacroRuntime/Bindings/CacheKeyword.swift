import PythonBridge
import WebAPI

/// `cache=` on every client call and on `apimacro.request`: the call's rule for the HTTP
/// cache (`CacheChoice`), bound around the call so each request it makes carries it.
enum CacheKeyword {
    /// The choice `value` names: nil for None or True (the headers' rules), `.off` for False,
    /// a duration (`"1h"`, `"30m"`, `"2d"`, seconds as an int), `"refresh"`, `"only-if-cached"`.
    static func choice(_ value: PyRef?, in function: String) throws -> CacheChoice? {
        guard let value, !value.isNone else { return nil }
        let what = "\(function)() argument 'cache'"
        switch try PythonValue(python: value) {
        case .bool(let flag): return flag ? nil : .off
        case .int(let seconds):
            guard seconds > 0, let choice = CacheChoice.parse(String(seconds)) else {
                throw ArgumentError(
                    "\(what) must be a positive number of seconds, not \(seconds)", raising: .valueError)
            }
            return choice
        case .string(let text):
            guard let choice = CacheChoice.parse(text) else {
                throw ArgumentError(
                    "\(what) must be \(CacheChoice.accepted), not \(text.debugDescription)", raising: .valueError)
            }
            return choice
        default:
            throw ArgumentError("\(what) must be \(CacheChoice.accepted), not '\(value.typeName)'")
        }
    }

    /// Gives every public method `builder` adds from now on the keyword-only `cache=None`
    /// (`keyword`: the name it takes on the native class; the plugin client's Python side passes
    /// its `cache=` as `_cache`, so that an endpoint parameter named `cache` still reaches the API).
    static func install<State: AnyObject>(on builder: NativeClass<State>, keyword: String = "cache") {
        builder.sharedKeyword = (
            keyword,
            { value, body in
                guard let choice = try choice(value, in: "cache") else { return try body() }
                return try CacheChoice.$current.withValue(choice) { try body() }
            }
        )
    }
}
