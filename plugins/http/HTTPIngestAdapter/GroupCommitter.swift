import HeraldPluginAPI
import Synchronization

/// Commits the records of concurrent requests together: while one commit runs, the requests that
/// arrive wait, and the next commit takes all of them (whole requests, up to `maxBatch` records, at
/// least one request). Many small requests therefore share one transaction and its sync, and each is
/// answered with the outcomes of exactly its own records once they are durable.
final class GroupCommitter: Sendable {
    /// What a request gets back: one outcome per record, or the commit's failure (nothing stored).
    typealias Answer = Result<[IngestReport.RecordOutcome], IngestError>

    private struct Waiting: Sendable {
        var records: [SourceRecord]
        var continuation: CheckedContinuation<Answer, Never>
    }

    private let waiting = Mutex<[Waiting]>([])
    private let wakeups: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation
    private let maxBatch: Int

    init(maxBatch: Int) {
        self.maxBatch = maxBatch
        (wakeups, wake) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// Queues `records` for the next commit and returns once it has committed or failed.
    func commit(_ records: [SourceRecord]) async -> Answer {
        await withCheckedContinuation { continuation in
            waiting.withLock { $0.append(Waiting(records: records, continuation: continuation)) }
            wake.yield()
        }
    }

    /// Commits what is queued until ``finish()``, then what is still queued, and returns.
    func run(ingest: AsyncIngest) async {
        for await _ in wakeups {
            while let group = take() { await commit(group, ingest: ingest) }
        }
        while let group = take() { await commit(group, ingest: ingest) }
    }

    /// Requests waiting for the next commit.
    var queuedRequests: Int { waiting.withLock { $0.count } }

    /// Ends ``run(ingest:)`` once the queue is empty (call it after the server has answered every request).
    func finish() { wake.finish() }

    private func take() -> [Waiting]? {
        waiting.withLock { queue -> [Waiting]? in
            guard !queue.isEmpty else { return nil }
            var count = 0
            var taken = 0
            while taken < queue.count, taken == 0 || count + queue[taken].records.count <= maxBatch {
                count += queue[taken].records.count
                taken += 1
            }
            let group = Array(queue.prefix(taken))
            queue.removeFirst(taken)
            return group
        }
    }

    private func commit(_ group: [Waiting], ingest: AsyncIngest) async {
        let records = group.flatMap(\.records)
        do {
            let report = try await ingest.commit(records)
            // A handle that does not report per record: events count as accepted, rejections as dead-lettered.
            let outcomes = report.outcomes.count == records.count ? report.outcomes : records.map { record in
                if case .event = record.outcome { .applied } else { .deadLettered }
            }
            var offset = 0
            for request in group {
                request.continuation.resume(returning: .success(Array(outcomes[offset..<offset + request.records.count])))
                offset += request.records.count
            }
        } catch {
            for request in group { request.continuation.resume(returning: .failure(error)) }
        }
    }
}
