import Foundation
@testable import HeraldCore
import Synchronization
import Testing

/// Store calls run outside Swift's cooperative pool, so they start while every one of its threads computes.
@Suite("Blocking calls")
struct BlockingCallsTests {
    /// What the pool's busy tasks and the call tell each other.
    final class Flags: Sendable {
        let started = Atomic(0)
        let ran = Atomic(false)
    }

    /// One task per core holds each of the pool's threads (it has one per core) and only lets go once the
    /// call has run, or after twenty seconds. The call must start while they hold them.
    @Test func aCallStartsWhileEveryCooperativeThreadIsBusy() async throws {
        let blocking = BlockingCalls(), flags = Flags()
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let deadline = ContinuousClock.now + .seconds(20)
        let busy = (0..<cores).map { index in
            Task.detached { () -> (allHeld: Bool, ranWhileHeld: Bool) in
                flags.started.add(1, ordering: .sequentiallyConsistent)
                while flags.started.load(ordering: .sequentiallyConsistent) < cores, ContinuousClock.now < deadline {}
                let allHeld = flags.started.load(ordering: .sequentiallyConsistent) == cores
                if index == 0 { blocking.submit { flags.ran.store(true, ordering: .sequentiallyConsistent) } }
                while !flags.ran.load(ordering: .sequentiallyConsistent), ContinuousClock.now < deadline {}
                return (allHeld, flags.ran.load(ordering: .sequentiallyConsistent))
            }
        }
        for task in busy {
            let outcome = await task.value
            try #require(outcome.allHeld, "every thread of the pool was held by a busy task")
            #expect(outcome.ranWhileHeld, "the call ran while the pool's threads were busy")
        }
    }

    @Test func aCallReturnsItsValueAndThrowsItsError() async throws {
        struct Refused: Error {}
        let blocking = BlockingCalls()
        #expect(try await blocking.run { 6 * 7 } == 42)
        await #expect(throws: Refused.self) { try await blocking.run { throw Refused() } }
    }
}
