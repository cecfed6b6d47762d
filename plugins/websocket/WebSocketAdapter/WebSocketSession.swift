import HeraldPluginAPI
import NIOCore
import NIOWebSocket
import Synchronization
import WSClient

/// One WebSocket connection: a reader that assembles messages (and never stops reading, so pings are
/// answered), a committer that commits what is waiting in one transaction with the last event id,
/// and the optional application-level ping.
final class WebSocketSession: Sendable {
    /// One message on its way to the committer.
    struct Item: Sendable {
        var record: SourceRecord
        var eventID: String?
    }

    let source: String
    let configuration: WebSocketSourceConfiguration
    let normaliser: WebSocketNormaliser
    let ingest: AsyncIngest
    let context: SourceContext
    let storesPosition: Bool
    let guardRail: RepeatedRejectionGuard
    private let state = Mutex<(closeReason: String?, lastInbound: ContinuousClock.Instant)>((nil, .now))

    init(source: String, configuration: WebSocketSourceConfiguration, normaliser: WebSocketNormaliser, ingest: AsyncIngest,
         context: SourceContext, storesPosition: Bool, guardRail: RepeatedRejectionGuard) {
        self.source = source
        self.configuration = configuration
        self.normaliser = normaliser
        self.ingest = ingest
        self.context = context
        self.storesPosition = storesPosition
        self.guardRail = guardRail
    }

    /// Why the session closed the connection itself, if it did.
    var closeReason: String? { state.withLock { $0.closeReason } }

    /// Runs the connection until it closes.
    func run(inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter) async throws {
        context.metrics.connects.increment()
        context.health.report(connected: true, at: context.clock.now())
        context.logger.info("WebSocket connected.", metadata: ["url": "\(configuration.url)"])
        if let subscribe = configuration.subscribe { try await outbound.write(.text(subscribe)) }
        let queue = BatchQueue<Item>(capacity: configuration.maxBatch * 4)
        async let committed: Void = commitLoop(queue, outbound: outbound)
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await self.context.shutdown.wait()
                guard self.context.shutdown.isTriggered else { return }
                try? await outbound.close(.goingAway, reason: "shutting down")
            }
            if let appPing = configuration.appPing {
                group.addTask { await self.appPingLoop(appPing, outbound: outbound) }
            }
            do {
                try await readLoop(inbound, outbound: outbound, queue: queue)
            } catch {
                close(reason: "read failed: \(error)")
            }
            queue.finish()
            group.cancelAll()
        }
        await committed
    }

    private func close(reason: String) {
        state.withLock { if $0.closeReason == nil { $0.closeReason = reason } }
    }

    private func readLoop(_ inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, queue: BatchQueue<Item>) async throws {
        let limit = configuration.maxMessageBytes
        var iterator = inbound.makeAsyncIterator()
        var buffer: [UInt8] = []
        var total = 0
        var text = false
        while let frame = try await iterator.next() {
            state.withLock { $0.lastInbound = .now }
            if frame.opcode != .continuation {
                buffer.removeAll(keepingCapacity: true)
                total = 0
                text = frame.opcode == .text
            }
            total += frame.data.readableBytes
            if total <= limit { buffer.append(contentsOf: frame.data.readableBytesView) }
            guard frame.fin else { continue }
            context.metrics.received.increment()
            context.metrics.bytes.increment(by: total)
            let receivedAt = context.clock.now()
            if total > limit {
                let provenance = Provenance(adapter: source, origin: configuration.url, rawSize: total, receivedAt: receivedAt)
                let rejection = Rejection(.oversize, "message is \(total) bytes, the limit is \(limit) (first \(buffer.count) bytes kept)")
                guard guardRail.admit(buffer, size: total) else { continue }
                await queue.push(Item(record: SourceRecord(provenance: provenance, outcome: .rejected(rejection), raw: buffer)))
                close(reason: "a \(total)-byte message exceeds max_message_bytes (\(limit))")
                try await outbound.close(.messageTooLarge, reason: "message too large")
                return
            }
            switch normaliser.read(buffer, text: text, receivedAt: receivedAt) {
            case .pong:
                continue
            case .record(let record, let eventID):
                if text, case .rejected(let rejection) = record.outcome, rejection.reason == .invalidUTF8 {
                    guard guardRail.admit(buffer, size: total) else { continue }
                    await queue.push(Item(record: record, eventID: eventID))
                    close(reason: "a text frame was not valid UTF-8")
                    try await outbound.close(.dataInconsistentWithMessage, reason: "invalid UTF-8")
                    return
                }
                await queue.push(Item(record: record, eventID: eventID))
            }
        }
    }

    private func commitLoop(_ queue: BatchQueue<Item>, outbound: WebSocketOutboundWriter) async {
        while let batch = await queue.take(upTo: configuration.maxBatch) {
            let lastID = batch.last(where: { $0.eventID != nil })?.eventID
            let checkpoints = storesPosition && lastID != nil
                ? [SourceCheckpoint(source: source, key: WebSocketSource.checkpointKey, value: lastID)] : []
            do {
                _ = try await ingest.commit(batch.map(\.record), checkpoints: checkpoints)
            } catch {
                // Nothing of the batch is stored; reconnecting resumes from the last committed id.
                close(reason: "commit failed (\(error))")
                queue.finish()
                try? await outbound.close(.unexpectedServerError, reason: "commit failed")
                return
            }
        }
    }

    private func appPingLoop(_ options: AppPingOptions, outbound: WebSocketOutboundWriter) async {
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: .milliseconds(Int64(options.intervalSeconds * 1000)))
                let sentAt = ContinuousClock.now
                try await outbound.write(.text(options.message))
                try await Task.sleep(for: .milliseconds(Int64(options.timeoutSeconds * 1000)))
                if state.withLock({ $0.lastInbound < sentAt }) {
                    close(reason: "no message within \(options.timeoutSeconds) s of an application ping")
                    try await outbound.close(.goingAway, reason: "ping timeout")
                    return
                }
            } catch {
                return
            }
        }
    }
}

/// Remembers the last message that made a session close the connection (oversize, invalid UTF-8).
/// A server that resumes from the last committed id sends it again after the reconnect; the second
/// time it is skipped (and logged) instead of closing again, so one poison message cannot stop the stream.
final class RepeatedRejectionGuard: Sendable {
    private let last = Mutex<(size: Int, prefix: [UInt8])?>(nil)

    /// `true` if the message should be dead-lettered and the connection closed; `false` for a repeat.
    func admit(_ prefix: [UInt8], size: Int) -> Bool {
        let head = Array(prefix.prefix(1024))
        return last.withLock { last in
            if let previous = last, previous.size == size, previous.prefix == head { return false }
            last = (size, head)
            return true
        }
    }
}
