import HeraldPluginAPI

extension OutboxDispatcher {
    /// Delivers `batch` through the sink, giving it at most the drain timeout once shutdown has begun: a
    /// delivery still running then is cancelled and counts as failed (its outputs stay in the outbox and
    /// go after the restart), so an endpoint that accepts and never answers cannot hold the shutdown.
    func deliverWithinDrain(_ batch: [OutboxEnvelope], shutdown: ShutdownSignal) async throws(SinkError) -> Int {
        let sink = sink, drainTimeout = drainTimeout
        let result = await withTaskGroup(of: Result<Int, SinkError>?.self) { group in
            group.addTask {
                do throws(SinkError) { return .success(try await sink.deliver(batch)) } catch { return .failure(error) }
            }
            group.addTask {
                await shutdown.wait()
                try? await Task.sleep(for: drainTimeout)
                return nil
            }
            var outcome: Result<Int, SinkError>?
            while outcome == nil, let next = await group.next() {
                // `nil`: the drain time is over while the delivery runs; cancel it and take what it says.
                if let next { outcome = next } else { group.cancelAll() }
            }
            group.cancelAll()
            return outcome ?? .failure(SinkError("delivery cancelled at the drain deadline"))
        }
        return try result.get()
    }
}
