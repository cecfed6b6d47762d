import HeraldTestKit

/// Herald's live intake alone, with a tail client that asks for everything and never reads, and with a
/// webhook sink whose receiver takes 50 ms per request: slow consumers must not slow intake.
struct ConsumerRuns {
    var alone: PhaseResult
    var stalledTail: PhaseResult
    var slowWebhook: PhaseResult
    /// Notifications the slow receiver got while intake ran.
    var hooksDelivered: Int

    /// Runs the three phases over at most 50,000 of the workload's messages.
    static func measure(_ workload: Workload, directory: TemporaryDirectory, step: (String) -> Void) async throws -> ConsumerRuns {
        var load = workload
        load.messages = min(workload.messages, 50_000)
        step("Herald live, \(load.messages) messages, without and with a stalled tail client")
        let alone = try await heraldPhase(load, backlog: false, directory: directory)
        let stalled = try await heraldPhase(load, backlog: false, stalledTail: true, directory: directory)
        step("Herald live, \(load.messages) messages, with a webhook sink whose receiver takes 50 ms per request")
        let (hooked, delivered) = try await slowWebhookPhase(load, delay: 0.05, directory: directory)
        return ConsumerRuns(alone: alone, stalledTail: stalled, slowWebhook: hooked, hooksDelivered: delivered)
    }

    /// The report's two lines.
    var report: String {
        """
        stalled tail client (asks for everything, never reads): \(format(stalledTail.rate)) msg/s vs \(format(alone.rate)) msg/s without — ratio \(format(stalledTail.rate / alone.rate, 2)) (target ≈ 1.0), peak RSS \(format(stalledTail.peakRSSMiB ?? 0, 1)) MiB
        slow webhook receiver (50 ms per request): intake \(format(slowWebhook.rate)) msg/s vs \(format(alone.rate)) msg/s without — ratio \(format(slowWebhook.rate / alone.rate, 2)) (target ≈ 1.0); \(hooksDelivered) of the notifications delivered meanwhile, the rest wait in the outbox
        """
    }
}
