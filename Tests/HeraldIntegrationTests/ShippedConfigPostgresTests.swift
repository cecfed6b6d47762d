import Foundation
import HeraldTestKit
import Testing

/// What docs/operations.md tells a newcomer to do to move the shipped config onto PostgreSQL, done to the
/// letter: the keys its step 3 names are replaced by its YAML block, and `herald badge` then answers from the
/// database. A change to the steps or to the shipped config that breaks the walk-through fails here.
@Suite("The shipped config switched to PostgreSQL as the docs say")
struct ShippedConfigPostgresTests {
    /// Step 3 of the PostgreSQL section of docs/operations.md: the `store:` keys it says to replace, and the
    /// lines of its YAML block that go in their place.
    static func documentedSwitch() throws -> (replaced: [String], lines: [String]) {
        let text = try String(contentsOf: ShippedConfigTests.root.appendingPathComponent("docs/operations.md"), encoding: .utf8)
        let section = try #require(text.components(separatedBy: "\n## PostgreSQL\n").dropFirst().first, "docs/operations.md has a PostgreSQL section")
        let step = try #require(section.components(separatedBy: "\n3. ").dropFirst().first?.components(separatedBy: "\n4. ").first,
                                "the section has a step 3")
        let instruction = try #require(step.components(separatedBy: "\n").first)
        let replaced = instruction.components(separatedBy: " under `store:`").first?
            .components(separatedBy: "`").enumerated().filter { $0.offset % 2 == 1 && $0.element.hasSuffix(":") }
            .map { String($0.element.dropLast()) } ?? []
        let block = try #require(step.components(separatedBy: "```yaml\n").dropFirst().first?.components(separatedBy: "```").first)
        let lines = block.split(separator: "\n").map { String($0.drop(while: { $0 == " " })) }.filter { !$0.isEmpty && !$0.hasPrefix("store:") }
        return (replaced, lines)
    }

    @Test func aBadgeUpdateComesFromPostgreSQLAfterTheDocumentedSwitch() async throws {
        let (replaced, lines) = try Self.documentedSwitch()
        #expect(replaced == ["path", "cache_mib"], "the keys step 3 names: \(replaced)")
        #expect(lines.map { $0.components(separatedBy: ":").first ?? "" } == ["url", "password_file"], "step 3's block: \(lines)")

        let cluster = try await PostgresCluster.shared()
        let database = try await cluster.createDatabase()
        let broker = try await MosquittoBroker()
        let directory = try TemporaryDirectory(prefix: "herald-shipped-pg")
        let shipped = try String(contentsOf: ShippedConfigTests.root.appendingPathComponent("deploy/config/herald.yaml"), encoding: .utf8)
        let passwordFile = try directory.write("herald-db.password", "choose-one\n")
        var edited: [String] = []
        for line in shipped.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            guard let key = replaced.first(where: { line.hasPrefix("  \($0):") }) else {
                edited.append(line)
                continue
            }
            // Where the first replaced key stood, the documented lines go in, aimed at the test's cluster.
            guard key == replaced[0] else { continue }
            for documented in lines {
                edited.append("  " + documented
                    .replacingOccurrences(of: "postgres://herald@127.0.0.1:5432/herald", with: database)
                    .replacingOccurrences(of: "var/herald-db.password", with: passwordFile))
            }
        }
        let config = try directory.write("herald.yaml", edited.joined(separator: "\n")
            .replacingOccurrences(of: "listen: 127.0.0.1:9464", with: "listen: 127.0.0.1:\(try Loopback.freePort())"))
        let environment = ["PATH": "/usr/bin:/bin", "HERALD_MQTT_URL": broker.url]

        let check = try ChildProcess(executable: HeraldProcess.binary, arguments: ["check", "--config", config],
                                     logPath: directory.path("check.log"), environment: environment)
        #expect(try await check.waitForExit() == 0, "\(check.output)")
        #expect(check.output.contains("store:   PostgreSQL \(database)?sslmode=disable"), "\(check.output)")

        let herald = try HeraldProcess(configPath: config, logPath: directory.path("herald.log"), environment: environment)
        defer { herald.child.signal(SIGTERM) }
        try await herald.waitUntilConnected(connections: 2)
        let observer = try await TestMQTTClient(port: broker.port, subscriptions: ["users/bob/badge"])
        let client = try await TestMQTTClient(port: broker.port)
        try client.publish("chats/c1/messages", messageJSON(id: "m1", from: "alice", to: ["bob"], sentAt: 1_000))
        try await observer.waitForMessages("bob's badge") { $0.contains { $0.text == #"{"chats":{"c1":1},"unread":1}"# } }

        let badge = try ChildProcess(executable: HeraldProcess.binary, arguments: ["badge", "bob", "--config", config],
                                     logPath: directory.path("badge.log"), environment: environment)
        #expect(try await badge.waitForExit() == 0, "\(badge.output)")
        #expect(badge.output.trimmingCharacters(in: .whitespacesAndNewlines) == #"{"chats":{"c1":1},"unread":1}"#)
        let name = try #require(database.split(separator: "/").last.map(String.init))
        let stored = try await cluster.psql(database: name, "SELECT chat || '/' || id FROM messages")
        #expect(stored.trimmingCharacters(in: .whitespacesAndNewlines) == "c1/m1", "the message is in PostgreSQL")
        for peer in [observer, client] { try await peer.close() }
    }
}
