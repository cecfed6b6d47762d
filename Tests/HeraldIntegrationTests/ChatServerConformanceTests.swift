import Foundation
import HeraldAdapters
import HeraldCore
import HeraldPluginAPI
import HeraldTestKit
import Synchronization
import Testing

/// The WebSocket and REST sources through the conformance kit, against `Tests/Servers/chat_server.py`.
/// Their upstreams have no acks; "never acknowledge before commit" means: after a failed commit the
/// stored position (event id, cursor) has not moved, so the reconnect or the next poll brings the input again.
final class ChatServerSubject: SourceConformanceSubject {
    let mode: ChatServer.Mode
    let directory: TemporaryDirectory
    let port: Int
    private let server: Mutex<ChatServer?>
    /// The JSON events served so far, to serve again after a restart.
    private let delivered = Mutex<[Data]>([])

    init(_ mode: ChatServer.Mode) async throws {
        self.mode = mode
        directory = try TemporaryDirectory(prefix: "herald-\(mode.rawValue)-conformance")
        let started = try await ChatServer(mode, in: directory)
        port = started.port
        server = Mutex(started)
    }

    func makeSource() throws -> any SourceAdapter {
        let section = switch mode {
        case .ws: "type: websocket\n    url: ws://127.0.0.1:\(port)/events\n    resume: {id_pointer: /event_id, query_param: since}"
        case .rest: "type: rest\n    endpoints: [{name: events, url: \"http://127.0.0.1:\(port)/events\", interval_s: 0.1, "
            + "cursor: {from: field, pointer: /next_cursor}}]"
        }
        let configuration = try ConfigurationLoader(registry: BuiltinAdapters.registry, environment: [:])
            .load(text: "sources:\n  - name: conformance\n    \(section)\n", file: "conformance")
        return try configuration.sources[0].settings.makeSource(name: "conformance")
    }

    /// Serves the input as the stream's next event (JSON objects get an event id; anything else is sent as is).
    func deliver(_ input: [UInt8], origin: String) async throws {
        let current = try #require(server.withLock { $0 })
        if let event = try? JSONSerialization.jsonObject(with: Data(input)) as? [String: Any] {
            delivered.withLock { $0.append(Data(input)) }
            try current.append([event])
        } else {
            try current.control("/ws", ["raw": [["text": String(decoding: input, as: UTF8.self)]]])
        }
    }

    /// Kills the server and starts a new one on the same port with the same events.
    func interruptUpstream() async throws {
        let old = server.withLock { $0 }
        await old?.stop()
        let restarted = try await ChatServer(mode, in: directory, port: port)
        try restarted.append(delivered.withLock { $0 }.compactMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] })
        server.withLock { $0 = restarted }
    }
}

@Suite("WebSocket and REST source conformance")
struct ChatServerConformanceTests {
    @Test(arguments: [ChatServer.Mode.ws, .rest])
    func theSourcePassesTheConformanceKit(_ mode: ChatServer.Mode) async throws {
        // The exec fixtures are Herald's feed shape, which these sources read the same way.
        let fixtures = try ConformanceFixture.load(from: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/exec"))
        let subject = try await ChatServerSubject(mode)
        let failures = try await SourceConformance.check(subject, fixtures: fixtures, adapter: "conformance")
        #expect(failures.isEmpty, "\(failures)")
    }
}
