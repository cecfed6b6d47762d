import Foundation
@testable import HeraldCore
import HeraldPluginAPI
import HeraldTestKit
import Testing

/// The outbox stores each output in its wire format and the dead-letter queue each rejected input as it
/// arrived: what a sink or an operator reads back is, byte for byte, what the batch wrote, whatever the
/// bytes (zero bytes, non-ASCII text, none at all) and however many rows the batch writes at once.
@Suite("Stored bytes, SQLite and PostgreSQL")
struct StoredBytesTests {
    @Test(arguments: StoreBackend.allCases) func outputsAndDeadLettersReadBackAsWritten(_ backend: StoreBackend) async throws {
        let harness = try await RouterHarness(backend)
        let raws: [[UInt8]] = [[], [0, 1, 0, 255], Array("caf\u{e9} \u{1F600}".utf8), Array(repeating: 0x41, count: 70_000)]
        let letters = raws.enumerated().map { index, raw in
            SourceRecord(provenance: Provenance(adapter: "test", origin: "r\(index)", rawSize: raw.count, receivedAt: harness.clock.now()),
                         outcome: .rejected(Rejection(.malformedJSON, "not JSON")), raw: raw)
        }
        let messages = (0..<300).map { index in
            harness.record(message(ChatID("c\(index % 7)"), MessageID("m\(index)"), from: "alice", to: ["bob", "carol"],
                                   body: "caf\u{e9} \(index) \u{1F600}", at: Int64(1_000 + index)))
        }
        let store = harness.store
        let router = harness.router
        let outputs = try await offCooperativePool { () -> [OutboxEnvelope] in
            _ = try router.commit(letters + messages)
            return try store.pendingOutputs(sink: "sink", after: 0, limit: 10_000)
        }
        #expect(outputs.count > 600)
        for envelope in outputs {
            let output = try OutputWireFormat.decode(kind: envelope.kind, recipient: envelope.recipient, payload: envelope.payload)
            #expect(OutputWireFormat.encode(output) == envelope.payload)
        }
        let notifications = outputs.filter { $0.kind == .notification }
        #expect(notifications.contains { String(decoding: $0.payload, as: UTF8.self).contains("caf\u{e9} 299 \u{1F600}") })

        let stored = try await offCooperativePool { try store.deadLetters(limit: 10, includeReplayed: true) }
        #expect(stored.map(\.raw) == raws)
    }
}
