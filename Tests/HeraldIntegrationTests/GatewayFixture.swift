import Foundation
import HeraldCore
import HeraldPluginAPI
import HeraldTestKit

/// One test's world: a real mosquitto on a free port, a temporary directory with a config and a
/// SQLite store, and the real `herald` binary run against them.
final class GatewayFixture: @unchecked Sendable {
    let directory: TemporaryDirectory
    let broker: MosquittoBroker
    var configuration: TestConfiguration
    let configPath: String
    private(set) var herald: HeraldProcess?
    private var runs = 0

    init(sourceExtra: String = "", sinkBroker: MosquittoBroker? = nil, broker: MosquittoBroker? = nil, storeURL: String? = nil,
         storeExtra: String = "", topLevelExtra: String = "") async throws {
        directory = try TemporaryDirectory(prefix: "herald-it")
        if let broker {
            self.broker = broker
        } else {
            self.broker = try await MosquittoBroker()
        }
        configuration = TestConfiguration(port: self.broker.port, storePath: directory.path("store.sqlite"))
        configuration.sourceExtra = sourceExtra
        configuration.storeURL = storeURL
        configuration.storeExtra = storeExtra
        configuration.topLevelExtra = topLevelExtra
        configuration.sinkPort = sinkBroker?.port
        configPath = try directory.write("herald.yaml", configuration.yaml)
    }

    /// Starts the gateway and waits until its source and sink are connected.
    @discardableResult
    func startHerald(waitForConnections: Int = 2) async throws -> HeraldProcess {
        runs += 1
        let process = try HeraldProcess(configPath: configPath, logPath: directory.path("herald-\(runs).log"))
        herald = process
        try await process.waitUntilConnected(connections: waitForConnections)
        return process
    }

    /// Opens the store the gateway writes (WAL: reading never blocks it).
    func store() throws -> SQLiteChatStore { try SQLiteChatStore(path: configuration.storePath, durability: .normal) }

    /// Runs a `herald` subcommand to completion.
    func cli(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        let child = try ChildProcess(executable: HeraldProcess.binary, arguments: arguments + ["--config", configPath],
                                     logPath: directory.path("cli-\(UUID().uuidString.prefix(6)).log"))
        let status = try await child.waitForExit()
        return (status, child.output)
    }

    /// Every log the gateway wrote, for failure messages.
    var logs: String { herald?.child.output ?? "" }
}

/// Herald's default message payload.
func messageJSON(id: String, from: String, to: [String]? = nil, body: String = "hello", sentAt: Int64 = 1_763_800_000_000) -> String {
    let recipients = to.map { ",\"to\":[" + $0.map { "\"\($0)\"" }.joined(separator: ",") + "]" } ?? ""
    return "{\"id\":\"\(id)\",\"from\":\"\(from)\"\(recipients),\"body\":\"\(body)\",\"sent_at\":\(sentAt)}"
}
