import Foundation
import HeraldCore
import HeraldPluginAPI
import HeraldTestKit
import Testing

/// A TCP listener on 127.0.0.1 that accepts connections and never answers: the endpoint that takes a
/// request and hangs.
final class SilentListener: Sendable {
    let port: Int
    private let descriptor: Int32

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.descriptor = descriptor
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, length) == 0 && listen(descriptor, 16) == 0 && getsockname(descriptor, $0, &length) == 0
            }
        }
        guard bound else { throw TestKitError("cannot listen on 127.0.0.1") }
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    /// Waits (on a thread of its own) until a client connects; the connection is kept open, unanswered.
    func acceptOne() async -> Int32 {
        let descriptor = descriptor
        return await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: accept(descriptor, nil, nil)) }
        }
    }

    deinit { close(descriptor) }
}

@Suite("Shutdown with outputs in flight")
struct ShutdownDrainTests {
    /// A webhook endpoint that accepts the request and never answers holds neither the delivery past
    /// `outbox.drain_timeout_s` nor the shutdown: Herald exits 0 soon after the drain deadline, not at the
    /// request's own timeout nor at the service group's 9-second limit, and the notification stays in the
    /// outbox for the next start.
    @Test func anEndpointThatNeverAnswersDoesNotHoldTheShutdown() async throws {
        let hanging = try SilentListener()
        let directory = try TemporaryDirectory()
        let httpPort = try Loopback.freePort(), adminPort = try Loopback.freePort()
        let storePath = directory.path("store.sqlite")
        let config = try directory.write("herald.yaml", """
            store:
              path: \(storePath)
              durability: normal
            outbox:
              drain_timeout_s: 1
            admin:
              listen: 127.0.0.1:\(adminPort)
            sources:
              - name: api
                type: http
                listen: 127.0.0.1:\(httpPort)
                tokens: [drain-token]
            sinks:
              - name: hooks
                type: webhook
                secret: a-signing-secret
                request_timeout_s: 120
                urls: {notification: "http://127.0.0.1:\(hanging.port)/hook"}

            """)
        let herald = try HeraldProcess(configPath: config, logPath: directory.path("run.log"))
        try await eventually("the HTTP source listening") { herald.child.output.contains("HTTP source listening.") }
        let connected = Task { await hanging.acceptOne() }
        let answer = try await HTTPIngestWorld.post(httpMessage("m1"), to: "http://127.0.0.1:\(httpPort)/v1/events", token: "drain-token")
        #expect(answer.status == 202)
        let connection = await connected.value
        defer { close(connection) }

        // The webhook request is now in flight and will not be answered; the request timeout is 120 s, and the
        // service group would cancel everything after 9 s. The drain deadline (1 s) must end it well before.
        herald.child.signal(SIGTERM)
        #expect(try await herald.child.waitForExit(timeout: .seconds(6)) == 0, "\(herald.child.output)")
        #expect(herald.child.output.contains("Sink delivery failed; retrying."), "\(herald.child.output)")
        let store = try SQLiteChatStore(path: storePath, durability: .normal)
        #expect(try store.statistics().outbox == 1, "the notification waits for the next start")
    }
}
