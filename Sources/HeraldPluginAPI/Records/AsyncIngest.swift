import Dispatch

/// Commits from async code without blocking Swift's cooperative threads: each commit runs on the
/// source's own serial queue while the calling task is suspended. Sources built on async libraries
/// (WebSocket, HTTP) use this; thread-based sources call ``IngestHandle`` directly.
public struct AsyncIngest: Sendable {
    /// The underlying handle.
    public let handle: any IngestHandle
    private let queue: DispatchQueue

    /// Wraps `handle`; `label` names the queue (the source's name is a good choice).
    public init(_ handle: any IngestHandle, label: String) {
        self.handle = handle
        self.queue = DispatchQueue(label: "herald.ingest.\(label)")
    }

    /// Commits `records` and `checkpoints` in one transaction; see ``IngestHandle/commit(_:checkpoints:)``.
    public func commit(_ records: [SourceRecord], checkpoints: [SourceCheckpoint] = []) async throws(IngestError) -> IngestReport {
        try await onQueue { handle throws(IngestError) in try handle.commit(records, checkpoints: checkpoints) }
    }

    /// Reads a committed checkpoint.
    public func checkpoint(source: String, key: String) async throws(IngestError) -> String? {
        try await onQueue { handle throws(IngestError) in try handle.checkpoint(source: source, key: key) }
    }

    /// Runs `body` on the source's queue while the calling task is suspended.
    private func onQueue<T: Sendable>(_ body: @escaping @Sendable (any IngestHandle) throws(IngestError) -> T) async throws(IngestError) -> T {
        let handle = handle
        let result: Result<T, IngestError> = await withCheckedContinuation { continuation in
            queue.async {
                do throws(IngestError) {
                    continuation.resume(returning: .success(try body(handle)))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        return try result.get()
    }
}
