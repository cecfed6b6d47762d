import Foundation
import HeraldCore
import Testing

/// Store calls run outside Swift's cooperative pool, so a slow or blocked one never holds a thread that
/// async tasks need.
@Suite("Blocking calls")
struct BlockingCallsTests {
    /// The name Linux keeps for the calling thread. libdispatch names each worker after the pool it serves:
    /// the cooperative pool's `com.apple.root.default-qos`, the overcommit pool's `….default-qos.overcommit`
    /// (15 bytes of either).
    static func threadName() -> String {
        let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
        return name.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func aCallRunsOnAThreadOutsideTheCooperativePool() async throws {
        let pool = await Task.detached { Self.threadName() }.value
        let call = try await BlockingCalls().run { Self.threadName() }
        #expect(!pool.isEmpty && !call.isEmpty)
        #expect(call != pool, "the call ran on \(call), a thread of the pool that runs tasks (\(pool))")
    }

    @Test func aCallReturnsItsValueAndThrowsItsError() async throws {
        struct Refused: Error {}
        let blocking = BlockingCalls()
        #expect(try await blocking.run { 6 * 7 } == 42)
        await #expect(throws: Refused.self) { try await blocking.run { throw Refused() } }
    }
}
