import HeraldTestKit
import NetworkAdapterSupport
import Testing

@Suite("TLS probes beside the real connections")
struct SPKIPinProbeTests {
    /// A probe whose connection is refused throws the connection's error and leaves nothing behind: its
    /// handshake promise is completed too (a debug build of SwiftNIO stops the process on a leaked one, as
    /// `herald` did when a pinned server went away between two reconnections).
    @Test func aRefusedProbeThrowsAndCompletesItsHandshake() async throws {
        let port = try Loopback.freePort()
        let configuration = try TLSClientOptions().makeConfiguration()
        for _ in 0..<3 {
            await #expect(throws: (any Error).self) {
                try await SPKIPinProbe.verify(host: "127.0.0.1", port: port, serverName: "localhost", configuration: configuration,
                                              pins: [])
            }
        }
        let explained = await SPKIPinProbe.explainVerificationFailure(host: "127.0.0.1", port: port, serverName: "localhost",
                                                                      configuration: configuration)
        #expect(explained == nil)
    }
}
