import Foundation
import HeraldTestKit
import Testing

/// SIGHUP: `herald run` reads its config again and restarts the gateway on it in the same process, or
/// keeps the running config when the file is not valid.
@Suite("Config reload on SIGHUP")
struct ConfigReloadTests {
    private static func preview(_ message: TestMQTTClient.Received) throws -> String {
        let fields = try #require(try JSONSerialization.jsonObject(with: Data(message.text.utf8)) as? [String: Any])
        return try #require(fields["preview"] as? String)
    }

    private static func connections(in logs: String) -> Int { logs.components(separatedBy: "MQTT connected.").count - 1 }

    /// The value of the metric whose line starts with `series` (its name and labels).
    private static func metric(_ series: String, _ fixture: GatewayFixture) throws -> Double {
        let metrics = try Loopback.get(port: fixture.configuration.adminPort, path: "/metrics")
        let line = try #require(metrics.split(separator: "\n").first { $0.hasPrefix(series + " ") }, "no \(series) in\n\(metrics)")
        return try #require(Double(line.split(separator: " ")[1]))
    }

    private static func outputsQueued(_ fixture: GatewayFixture) throws -> Int {
        Int(try metric("herald_outputs_queued_total", fixture))
    }

    @Test func aValidConfigIsTakenUpInTheSameProcessAndAnInvalidOneLeavesTheRunningOne() async throws {
        let fixture = try await GatewayFixture()
        let herald = try await fixture.startHerald()
        let observer = try await TestMQTTClient(port: fixture.broker.port, subscriptions: ["users/bob/notifications"])
        let client = try await TestMQTTClient(port: fixture.broker.port)
        let body = String(repeating: "abcde ", count: 15)  // 90 characters: whole under the default preview_length
        try client.publish("chats/c1/messages", messageJSON(id: "m1", from: "alice", to: ["bob"], body: body))
        try await observer.waitForMessages("m1's notification") { $0.count == 1 }
        #expect(try Self.preview(observer.received[0]) == body)
        let queuedByOne = try Self.outputsQueued(fixture)
        #expect(queuedByOne > 0)

        // A valid change: shorter previews. Two hangups in a row: the second arrives while the gateway
        // restarts or after, and must not end the process either way.
        fixture.configuration.topLevelExtra = "router:\n  preview_length: 20"
        try fixture.directory.write("herald.yaml", fixture.configuration.yaml)
        herald.child.signal(SIGHUP)
        herald.child.signal(SIGHUP)
        try await eventually("the gateway to restart and connect again") {
            guard herald.child.isRunning else { throw TestKitError("herald exited on SIGHUP:\n\(fixture.logs)") }
            return fixture.logs.contains("SIGHUP: the config is valid; restarting the gateway on it.") && Self.connections(in: fixture.logs) >= 4
                && fixture.logs.components(separatedBy: "Herald starting.").count - 1 >= 2
        }
        try client.publish("chats/c1/messages", messageJSON(id: "m2", from: "alice", to: ["bob"], body: body, sentAt: 1_763_800_001_000))
        try await observer.waitForMessages("m2's notification") { $0.count == 2 }
        #expect(try Self.preview(observer.received[1]) == String(body.prefix(19)) + "…")

        // An invalid file: the error names its line, and the running config stays.
        try fixture.directory.write("herald.yaml", fixture.configuration.yaml.replacingOccurrences(of: "preview_length: 20", with: "preview_length: many"))
        herald.child.signal(SIGHUP)
        try await eventually("the refusal in the log") { fixture.logs.contains("SIGHUP: the config is not valid; the running config stays.") }
        let refusal = try #require(fixture.logs.split(separator: "\n").first { $0.contains("the running config stays") })
        #expect(refusal.contains("herald.yaml:") && refusal.contains("router.preview_length"))
        try client.publish("chats/c1/messages", messageJSON(id: "m3", from: "alice", to: ["bob"], body: body, sentAt: 1_763_800_002_000))
        try await observer.waitForMessages("m3's notification") { $0.count == 3 }
        #expect(try Self.preview(observer.received[2]) == String(body.prefix(19)) + "…")
        #expect(herald.child.isRunning)
        #expect(try Self.outputsQueued(fixture) == 3 * queuedByOne, "the metrics count on across the restart")
        #expect(try Self.metric("herald_config_last_reload_successful", fixture) == 0)
        #expect(try Self.metric(#"herald_config_reloads_total{result="failure"}"#, fixture) >= 1)
        #expect(try Self.metric(#"herald_config_reloads_total{result="success"}"#, fixture) >= 1)
        #expect(try Self.metric("herald_config_last_reload_success_timestamp_seconds", fixture) > 1_700_000_000)

        // The file mended: the next SIGHUP reloads, and the gauge says so again.
        let starts = fixture.logs.components(separatedBy: "Herald starting.").count - 1
        try fixture.directory.write("herald.yaml", fixture.configuration.yaml)
        herald.child.signal(SIGHUP)
        try await eventually("the mended config to be taken up") {
            guard fixture.logs.components(separatedBy: "Herald starting.").count - 1 > starts else { return false }
            return (try? Self.metric("herald_config_last_reload_successful", fixture)) == 1
        }

        herald.child.signal(SIGTERM)
        #expect(try await herald.child.waitForExit() == 0)
        for peer in [observer, client] { try await peer.close() }
        // Every message once, across the restarts.
        try fixture.directory.write("herald.yaml", fixture.configuration.yaml)
        let badge = try await fixture.cli(["badge", "bob"])
        #expect(badge.output.contains(#""unread":3"#))
    }

    @Test func aStopRightAfterAReloadStopsTheProcess() async throws {
        // SIGTERM may reach the gateway before or after it took up the SIGHUP; either way it stops. Three
        // rounds, so that the second order (the one a reload could swallow) comes up.
        for _ in 1...3 {
            let fixture = try await GatewayFixture()
            let herald = try await fixture.startHerald()
            herald.child.signal(SIGHUP)
            herald.child.signal(SIGTERM)
            #expect(try await herald.child.waitForExit() == 0)
            #expect(fixture.logs.components(separatedBy: "Herald starting.").count - 1 == 1, "\(fixture.logs)")
        }
    }

    @Test func reloadsOnPostgreSQLLeaveNoConnectionBehind() async throws {
        // A cluster of its own: a reload opens the new run's connections while the last run's close, and
        // the shared cluster's connection slots belong to the tests running beside this one.
        let cluster = try await PostgresCluster()
        let url = try await cluster.createDatabase()
        let database = String(url.split(separator: "/").last ?? "")
        let fixture = try await GatewayFixture(storeURL: url)
        let herald = try await fixture.startHerald()
        let observer = try await TestMQTTClient(port: fixture.broker.port, subscriptions: ["users/bob/notifications"])
        let client = try await TestMQTTClient(port: fixture.broker.port)
        try client.publish("chats/c1/messages", messageJSON(id: "m1", from: "alice", to: ["bob"]))
        try await observer.waitForMessages("m1's notification") { $0.count == 1 }
        let connectionsQuery = "SELECT count(*) FROM pg_stat_activity WHERE datname = '\(database)' AND application_name LIKE 'herald/%'"
        let before = try #require(Int(try await cluster.psql(database: "postgres", connectionsQuery).trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(before > 0)

        for run in 2...4 {
            herald.child.signal(SIGHUP)
            try await eventually("run \(run) of the gateway to connect") {
                guard herald.child.isRunning else { throw TestKitError("herald exited on SIGHUP:\n\(fixture.logs)") }
                return fixture.logs.components(separatedBy: "Herald starting.").count - 1 >= run && Self.connections(in: fixture.logs) >= 2 * run
            }
        }
        try client.publish("chats/c1/messages", messageJSON(id: "m2", from: "alice", to: ["bob"], sentAt: 1_763_800_001_000))
        try await observer.waitForMessages("m2's notification") { $0.count == 2 }
        try await eventually("the earlier runs' connections to be closed") {
            try await Int(cluster.psql(database: "postgres", connectionsQuery).trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1 <= before
        }
        herald.child.signal(SIGTERM)
        #expect(try await herald.child.waitForExit() == 0)
        for peer in [observer, client] { try await peer.close() }
    }
}
