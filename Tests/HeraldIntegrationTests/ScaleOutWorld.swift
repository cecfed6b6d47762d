import Foundation
import HeraldCore
import HeraldPluginAPI
import HeraldPostgres
import HeraldTestKit

/// Several `herald run` processes on one PostgreSQL database and one broker, as an operator runs them:
/// each has its own instance id, client ids and admin port; the MQTT source is a shared subscription
/// over MQTT 5. The processes and the broker are killed when the world goes away.
final class ScaleOutWorld: @unchecked Sendable {
    let directory: TemporaryDirectory
    let broker: MosquittoBroker
    let url: String
    let cluster: PostgresCluster
    let store: PostgresChatStore
    let adminPorts: [Int]
    private(set) var processes: [HeraldProcess?]
    private var runs = 0

    /// Writes `count` configs; `extraSources` is YAML for more sources (a list continuing `sources:`).
    /// `cluster` defaults to the test process's shared one; a test that stops the server brings its own.
    init(count: Int, leaseTTLSeconds: Double = 2, extraSources: String = "", cluster: PostgresCluster? = nil) async throws {
        directory = try TemporaryDirectory(prefix: "herald-scale")
        broker = try await MosquittoBroker()
        if let cluster {
            self.cluster = cluster
        } else {
            self.cluster = try await PostgresCluster.shared()
        }
        url = try await self.cluster.createDatabase()
        adminPorts = try (0..<count).map { _ in try Loopback.freePort() }
        processes = Array(repeating: nil, count: count)
        let url = url
        store = try await offCooperativePool { try PostgresChatStore(settings: PostgresStoreSettings(url: url), logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }) }
        for index in 0..<count {
            _ = try directory.write("herald-\(index).yaml", """
                store:
                  url: \(url)
                instance:
                  id: herald-\(index)
                  lease_ttl_s: \(leaseTTLSeconds)
                outbox:
                  drain_timeout_s: 3
                admin:
                  listen: 127.0.0.1:\(adminPorts[index])
                  reconnect_budget_s: 0
                sources:
                  - name: broker
                    type: mqtt
                    url: \(broker.url)
                    client_id: herald-ingest-\(index)
                    protocol: 5
                    share_group: herald
                    keepalive: 10
                \(extraSources)
                sinks:
                  - name: push
                    type: mqtt
                    url: \(broker.url)
                    client_id: herald-push-\(index)
                    ack_timeout_s: 2
                """)
        }
    }

    /// One value from a query on the database, as text.
    func query(_ sql: String) async throws -> String {
        try await cluster.psql(database: String(url.split(separator: "/").last ?? ""), sql).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The instance id of config `index`.
    static func id(_ index: Int) -> String { "herald-\(index)" }

    /// Starts instance `index` and waits until its MQTT source and sink are connected.
    func start(_ index: Int) async throws {
        runs += 1
        let process = try HeraldProcess(configPath: directory.path("herald-\(index).yaml"), logPath: directory.path("herald-\(index)-\(runs).log"))
        processes[index] = process
        try await process.waitUntilConnected(connections: 2, timeout: .seconds(60))
    }

    /// `kill -9` of instance `index`.
    func kill9(_ index: Int) async throws {
        try await processes[index]?.child.kill9()
        processes[index] = nil
    }

    /// The instance index holding `lease`, if one does.
    func holder(of lease: String) throws -> Int? {
        try store.activeLeases().first { $0.name == lease }.flatMap { record in
            (0..<processes.count).first { Self.id($0) == record.holder }
        }
    }

    /// Every instance's log, for failure messages.
    var logs: String { processes.compactMap { $0?.child.output }.joined(separator: "\n-----\n") }
}
