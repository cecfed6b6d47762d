import Dispatch
import Synchronization

/// Work handed to a dispatch queue, whose result the caller collects later: the caller does something
/// else meanwhile, then ``result()`` waits for the work to finish.
final class BackgroundWork<Value: Sendable>: Sendable {
    private let finished = DispatchSemaphore(value: 0)
    private let outcome = Mutex<Result<Value, any Error>>(.failure(NotFinished()))

    private init() {}

    /// Starts `body` on `queue`.
    static func start(on queue: DispatchQueue, _ body: @escaping @Sendable () throws -> Value) -> BackgroundWork {
        let work = BackgroundWork()
        queue.async {
            let result = Result { try body() }
            work.outcome.withLock { $0 = result }
            work.finished.signal()
        }
        return work
    }

    /// Waits for the work; returns its value or throws its error. Call once.
    func result() throws -> Value {
        finished.wait()
        return try outcome.withLock { $0 }.get()
    }

    /// What ``result()`` would report before the work finished (it never does: it waits first).
    struct NotFinished: Error {}
}
