import PythonBridge
import WebAPI

extension APIClient {
    /// `send(request)` for a binding, called on a Python thread with the GIL held: a fresh cache
    /// hit is answered on this thread, without `withoutGIL`'s task (`answerAtOnce`); anything
    /// else is sent as prepared, with what the cache read for it already, the GIL released
    /// while it waits.
    func sendFromPython(_ request: Request) throws -> Response {
        switch try withoutGILAtOnce({ try answerAtOnce(request) }) {
        case .answered(let answer): return answer
        case .later(let exchange): return try withoutGIL { try await self.send(prepared: exchange) }
        }
    }
}
