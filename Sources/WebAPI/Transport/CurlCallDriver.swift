/// One call's hold on its thread's `CurlThreadWorker`: what the caller's thread waits on
/// while the call's tasks are suspended on their transfers.
///
/// Made when the call's first transfer starts, installed on the caller (see
/// `TransferCaller.driver`), abandoned when the call ends.
final class CurlCallDriver: TransferDriver {
    let worker: CurlThreadWorker

    init(_ worker: CurlThreadWorker) {
        self.worker = worker
    }

    func wait(milliseconds: Int) { worker.drive(milliseconds: milliseconds) }
    func wake() { worker.wake() }
    func abandon() { worker.abandon(self) }
}
