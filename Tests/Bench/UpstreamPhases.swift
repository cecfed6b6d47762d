import Foundation
import HeraldCore
import HeraldTestKit

/// The intake styles of issue #3 measured like MQTT: a local WebSocket server pushing the whole
/// workload, and a REST server paging it 500 items at a time. Both start with everything ready
/// upstream, so they compare with Herald's MQTT backlog figure.
func upstreamPhase(_ workload: Workload, mode: ChatServer.Mode, directory: TemporaryDirectory) async throws -> PhaseResult {
    let scratch = try TemporaryDirectory(prefix: "herald-bench-\(mode.rawValue)")
    let server = try await ChatServer(mode, in: scratch, arguments: [
        "--preload", "\(workload.messages)", "--chats", "\(workload.chats)", "--members", "\(workload.members)", "--page-size", "500",
    ])
    let storePath = scratch.path("store.sqlite")
    let source = switch mode {
    case .ws:
        """
          - name: stream
            type: websocket
            url: ws://127.0.0.1:\(server.port)/events
            resume: {id_pointer: /event_id, query_param: since}
            max_message_bytes: 4096
        """
    case .rest:
        """
          - name: backend
            type: rest
            endpoints:
              - {name: events, url: "http://127.0.0.1:\(server.port)/events", interval_s: 1, cursor: {from: field, pointer: /next_cursor}}
        """
    }
    let configPath = try scratch.write("herald.yaml", """
        store:
          path: \(storePath)
          durability: \(workload.durability)\(workload.cacheMiB.map { "\n  cache_mib: \($0)" } ?? "")
        admin:
          listen: 127.0.0.1:\(try Loopback.freePort())
        sources:
        \(source)
        """)
    let started = ContinuousClock.now
    let herald = try HeraldProcess(configPath: configPath, logPath: scratch.path("herald.log"))
    var store: SQLiteChatStore?
    try await waitUntilCommitted(workload, by: [herald], store: {
        // Herald creates and migrates the store; read it once it is there.
        if store == nil { store = try? SQLiteChatStore(path: storePath, durability: .normal, readOnly: true) }
        return store
    })
    let elapsed = seconds(ContinuousClock.now - started)
    let after = ProcessStats(pid: herald.child.pid)
    herald.child.signal(SIGTERM)
    _ = try await herald.child.waitForExit()
    await server.stop()
    return PhaseResult(rate: Double(workload.messages) / elapsed, cpuPerThousand: after.cpuSeconds / Double(workload.messages) * 1000,
                       peakRSSMiB: after.peakRSSMiB)
}

/// MQTT intake with a webhook sink whose receiver answers every request after `delay` seconds: the
/// outputs wait in the outbox, intake must not notice.
func slowWebhookPhase(_ workload: Workload, delay: Double, directory: TemporaryDirectory) async throws -> (PhaseResult, delivered: Int) {
    let scratch = try TemporaryDirectory(prefix: "herald-bench-webhook")
    let receiver = try await ChatServer(.rest, in: scratch, arguments: ["--hook-delay", "\(delay)"])
    let broker = try await MosquittoBroker()
    var configuration = try workload.configuration(port: broker.port, storePath: scratch.path("store.sqlite"))
    configuration.topLevelExtra = """
          - name: hooks
            type: webhook
            secret: bench-secret
            urls: {notification: "http://127.0.0.1:\(receiver.port)/hooks/notify"}
        """
    let configPath = try scratch.write("herald.yaml", configuration.yaml)
    let herald = try HeraldProcess(configPath: configPath, logPath: scratch.path("herald.log"))
    try await herald.waitUntilConnected(connections: 1)
    let store = try SQLiteChatStore(path: configuration.storePath, durability: .normal)
    let started = ContinuousClock.now
    let publisher = Task { try await publish(workload, port: broker.port) }
    try await waitUntilCommitted(workload, by: [herald], store: { store })
    let elapsed = seconds(ContinuousClock.now - started)
    let after = ProcessStats(pid: herald.child.pid)
    try await publisher.value
    let delivered = (try? receiver.log("hooks").count) ?? 0
    try await herald.child.kill9()
    await receiver.stop()
    return (PhaseResult(rate: Double(workload.messages) / elapsed, peakRSSMiB: after.peakRSSMiB), delivered)
}
