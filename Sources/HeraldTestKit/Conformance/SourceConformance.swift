import Foundation
public import HeraldPluginAPI
import Logging
import MetricsTestKit

/// What an adapter's test provides so ``SourceConformance`` can exercise it against its real upstream.
public protocol SourceConformanceSubject: Sendable {
    /// Builds the source, connected to the test's upstream (a broker, a plugin, a server).
    func makeSource() throws -> any SourceAdapter
    /// Delivers raw input upstream (publish it, append it, serve it) at `origin` (may be empty).
    func deliver(_ input: [UInt8], origin: String) async throws
    /// Takes the upstream away and brings it back (stop and start the broker, kill the plugin process).
    func interruptUpstream() async throws
}

/// The checks every source adapter passes (the conformance kit):
///
/// 1. each fixture normalises to its expected events, or is rejected with its expected reason;
/// 2. it never acknowledges before commit: after a failed commit the same input arrives again;
/// 3. it survives its upstream going away and coming back;
/// 4. it maintains the standard metrics (`herald_source_received_total` and friends);
/// 5. it stops when shutdown is requested: `run()` returns by itself (the kit waits a minute, as for its other steps).
///
/// Returns the failures as sentences; an empty array means the adapter conforms.
public enum SourceConformance {
    /// Runs every check against `subject` with `fixtures`.
    public static func check(_ subject: some SourceConformanceSubject, fixtures: [ConformanceFixture], adapter: String) async throws -> [String] {
        var failures: [String] = []
        let ingest = RecordingIngest()
        let metrics = TestMetrics()
        let shutdown = ShutdownSignal()
        let context = SourceContext(ingest: ingest, logger: Logger(label: "conformance") { _ in SwiftLogNoOpLogHandler() },
                                    metrics: SourceMetrics(adapter: adapter, factory: metrics), shutdown: shutdown, clock: ConformanceClock())
        let source = try subject.makeSource()
        let running = Task { _ = try? await source.run(context: context) }
        defer { running.cancel() }
        try await eventually("the source to connect", timeout: .seconds(60)) { context.health.snapshot.connected }

        // 1. Fixtures, one at a time, in order.
        for fixture in fixtures {
            let before = ingest.records.count
            try await subject.deliver(fixture.input, origin: fixture.origin)
            let expected = fixture.expectedEvents?.count ?? 1
            do {
                try await eventually("fixture \(fixture.name)", timeout: .seconds(60)) { ingest.records.count >= before + expected }
            } catch {
                failures.append("\(fixture.name): nothing arrived")
                continue
            }
            let got = Array(ingest.records[before...])
            if let events = fixture.expectedEvents {
                let actual = got.compactMap { record -> String? in
                    guard case .event(let event) = record.outcome else { return nil }
                    return EventDocument.canonical(EventDocument.object(event))
                }
                if actual != events { failures.append("\(fixture.name): expected \(events), got \(actual) \(got.map(\.outcome))") }
            } else if let reason = fixture.expectedRejection {
                guard case .rejected(let rejection) = got.first?.outcome, rejection.reason.rawValue == reason else {
                    failures.append("\(fixture.name): expected rejection \(reason), got \(got.map(\.outcome))")
                    continue
                }
                if got.first?.raw.isEmpty == true { failures.append("\(fixture.name): the rejection carries no raw bytes for the DLQ") }
            }
        }

        // 2. Never acknowledge before commit: fail the next commit; the input must come again.
        if let probe = fixtures.first(where: { $0.expectedEvents?.isEmpty == false }) {
            let before = ingest.records.count
            ingest.failNextCommits(1)
            try await subject.deliver(probe.input, origin: probe.origin)
            do {
                try await eventually("redelivery after a failed commit", timeout: .seconds(60)) {
                    ingest.failedCommits == 1 && ingest.records.count > before
                }
            } catch {
                failures.append("after a failed commit the input was not delivered again: it was acknowledged before commit")
            }
        }

        // 3. Upstream away and back.
        if let probe = fixtures.first(where: { $0.expectedEvents?.isEmpty == false }) {
            try await subject.interruptUpstream()
            let before = ingest.records.count
            try await subject.deliver(probe.input, origin: probe.origin)
            do {
                try await eventually("input after the upstream came back", timeout: .seconds(60)) { ingest.records.count > before }
            } catch {
                failures.append("nothing arrived after the upstream went away and came back")
            }
        }

        // 4. Standard metrics.
        let received = metrics.counters(label: "herald_source_received_total", dimensions: [("adapter", adapter)]).map(\.totalValue).reduce(0, +)
        if received < Int64(fixtures.count) { failures.append("herald_source_received_total is \(received), expected ≥ \(fixtures.count)") }
        let connects = metrics.counters(label: "herald_source_connects_total", dimensions: [("adapter", adapter)]).map(\.totalValue).reduce(0, +)
        if connects < 1 { failures.append("herald_source_connects_total never moved") }

        // 5. Shutdown: run() returns by itself. Like the other steps this waits for an event, not a time, with a
        // minute for a test process that is busy elsewhere; a source that ignores shutdown never returns.
        shutdown.trigger()
        let returned = await withTaskGroup(of: Bool.self) { group in
            group.addTask { _ = await running.value; return true }
            group.addTask { try? await Task.sleep(for: .seconds(60)); return false }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        if !returned { failures.append("run() did not return within a minute of shutdown") }
        return failures
    }
}

/// Wall-clock time for conformance runs.
struct ConformanceClock: WallClock {
    func now() -> Timestamp { Timestamp(milliseconds: Int64((Date().timeIntervalSince1970 * 1000).rounded())) }
}
