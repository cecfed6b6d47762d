import Foundation
import HeraldCore
import HeraldTestKit
import Testing

/// `herald dlq purge` beside a running gateway: it refuses without a condition, takes only what its
/// conditions name, and the gateway's status counts what is left.
@Suite("herald dlq purge")
struct DeadLetterPurgeCommandTests {
    @Test func purgesByConditionBesideARunningGateway() async throws {
        let fixture = try await GatewayFixture()
        try await fixture.startHerald()
        let client = try await TestMQTTClient(port: fixture.broker.port)
        for payload in ["nope", "{", "[]"] { try client.publish("chats/c1/messages", payload) }
        try await client.waitForAcknowledgements(3)
        try await eventually("three dead letters") { try fixture.store().openDeadLetterCount() == 3 }

        let refused = try await fixture.cli(["dlq", "purge"])
        #expect(refused.status == 64 && refused.output.contains("name what to purge"), "\(refused.output)")
        let none = try await fixture.cli(["dlq", "purge", "--adapter", "elsewhere"])
        #expect(none.status == 0 && none.output.contains("Purged 0 dead letters; 3 not replayed remain."), "\(none.output)")
        let recent = try await fixture.cli(["dlq", "purge", "--older-than", "1d"])
        #expect(recent.output.contains("Purged 0 dead letters"), "they arrived just now: \(recent.output)")
        let dryRun = try await fixture.cli(["dlq", "purge", "--adapter", "broker", "--older-than", "0s", "--dry-run"])
        #expect(dryRun.status == 0 && dryRun.output.contains("Would purge 3 dead letters."), "\(dryRun.output)")
        #expect(try fixture.store().openDeadLetterCount() == 3, "a dry run removes nothing")
        let all = try await fixture.cli(["dlq", "purge", "--adapter", "broker", "--older-than", "0s"])
        #expect(all.status == 0 && all.output.contains("Purged 3 dead letters; 0 not replayed remain."), "\(all.output)")

        let list = try await fixture.cli(["dlq", "list", "--all"])
        #expect(list.output.contains("The dead-letter queue is empty."), "\(list.output)")
        let status = try await fixture.cli(["status"])
        #expect(status.output.contains("dead letters 0"), "\(status.output)")
        #expect(status.output.contains("  at         \(fixture.configuration.storePath), durability normal"), "\(status.output)")
        try await client.close()
    }
}
