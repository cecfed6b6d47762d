import AsyncHTTPClient
import Foundation
import HeraldAdapters
import HeraldCore
import HeraldPluginAPI
import HeraldTestKit
import NIOCore
import NIOHTTP1
import Synchronization
import Testing

/// The HTTP source as a client sees it: POSTs the fixture as a request body (the origin names the
/// content type) and, like a real client, sends it again after a 503 (a failed commit) until it is
/// answered 202. "Upstream away and back" drops the client's connections and opens new ones.
final class HTTPSourceSubject: SourceConformanceSubject {
    let port: Int
    private let client = Mutex<HTTPClient>(HTTPClient(eventLoopGroupProvider: .singleton))

    init() throws { port = try Loopback.freePort() }

    func makeSource() throws -> any SourceAdapter {
        let configuration = try ConfigurationLoader(registry: BuiltinAdapters.registry, environment: [:]).load(
            text: "sources:\n  - name: conformance\n    type: http\n    listen: 127.0.0.1:\(port)\n    tokens: [conformance-token]\n",
            file: "conformance")
        return try configuration.sources[0].settings.makeSource(name: "conformance")
    }

    func deliver(_ input: [UInt8], origin: String) async throws {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/events")
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer conformance-token")
        request.headers.add(name: "Content-Type", value: origin.isEmpty ? "application/json" : origin)
        request.body = .bytes(ByteBuffer(bytes: input))
        let current = client.withLock { $0 }
        try await eventually("the request answered 202") {
            // The answer waits for the commit, which the kit may hold a while (longer under a sanitizer).
            let response = try await current.execute(request, timeout: .seconds(60))
            _ = try await response.body.collect(upTo: 1 << 20)
            return response.status.code == 202
        }
    }

    func interruptUpstream() async throws {
        let old = client.withLock { client in
            defer { client = HTTPClient(eventLoopGroupProvider: .singleton) }
            return client
        }
        try await old.shutdown()
    }

    deinit { try? client.withLock { $0 }.syncShutdown() }
}

@Suite("HTTP ingest source under faults")
struct HTTPSourceFaultTests {
    @Test func theHTTPSourcePassesTheConformanceKit() async throws {
        let fixtures = try ConformanceFixture.load(from: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/http"))
        #expect(fixtures.count >= 4)
        let failures = try await SourceConformance.check(try HTTPSourceSubject(), fixtures: fixtures, adapter: "conformance")
        #expect(failures.isEmpty, "\(failures)")
    }

    /// Four clients post 2,000 messages in requests of 20 while the gateway is killed with SIGKILL: every
    /// message answered 202 is in the store the moment it dies; the clients then send what was not
    /// answered again, and after a restart every message is stored exactly once.
    @Test func killNineDuringAStreamOfPostsLosesNothingAnswered() async throws {
        let world = try HTTPIngestWorld()
        var herald = try await world.start()
        let total = 2000, perRequest = 20, clients = 4
        let requests = (0..<(total / perRequest)).map { index in
            (index, "[" + (0..<perRequest).map { httpMessage("m\(index * perRequest + $0)", chat: "c\($0 % 7)") }.joined(separator: ",") + "]")
        }
        let answered = AnsweredRequests()
        let posting = Task {
            await withTaskGroup(of: Void.self) { group in
                for client in 0..<clients {
                    let share = requests.filter { $0.0 % clients == client }
                    group.addTask { await Self.post(share, to: world, answered: answered) }
                }
            }
        }
        try await eventually("a quarter of the requests answered") { answered.count >= requests.count / 4 }
        try await herald.child.kill9()
        let answeredBeforeKill = answered.indices
        // Every request answered 202 before the kill is durable: its 20 messages are in the store.
        let store = try world.store()
        for index in answeredBeforeKill {
            for offset in 0..<perRequest {
                let id = index * perRequest + offset
                #expect(try store.containsMessage(chat: ChatID("c\(offset % 7)"), id: MessageID("m\(id)")), "m\(id) was answered 202")
            }
        }
        herald = try await world.start()
        defer { herald.child.signal(SIGKILL) }
        await posting.value
        #expect(answered.count == requests.count)
        #expect(try world.store().statistics().messages == total, "every message stored exactly once")
    }

    /// Posts every request of `share` until each is answered 202; a refused or broken connection (the
    /// gateway is down) is tried again, as a client would.
    static func post(_ share: [(Int, String)], to world: HTTPIngestWorld, answered: AnsweredRequests) async {
        for (index, body) in share {
            while true {
                if let answer = try? await world.post(body), answer.status == 202 {
                    answered.insert(index)
                    break
                }
                try? await Task.sleep(for: .milliseconds(20))
            }
        }
    }
}

/// The requests answered 202 so far.
final class AnsweredRequests: Sendable {
    private let state = Mutex<Set<Int>>([])
    func insert(_ index: Int) { state.withLock { _ = $0.insert(index) } }
    var count: Int { state.withLock { $0.count } }
    var indices: Set<Int> { state.withLock { $0 } }
}
