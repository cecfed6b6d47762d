import HeraldTestKit
import Testing

/// The test kit's `Command`: what the tests use to run psql, pg_ctl and mount.
@Suite("Test kit: Command")
struct CommandTests {
    @Test func aCommandsOutputIsReturnedAndAFailureCarriesIt() async throws {
        #expect(try await Command.run("/bin/sh", ["-c", "echo out; echo err >&2"]) == "out\nerr\n")
        let failure = await #expect(throws: TestKitError.self) { try await Command.run("/bin/sh", ["-c", "echo why; exit 3"]) }
        #expect(failure?.description.contains("failed (3): why") == true, "\(String(describing: failure))")
    }

    /// A command that never ends is killed at its timeout and fails, so a hung psql
    /// fails its test instead of holding the whole run.
    @Test func aCommandPastItsTimeoutIsKilledAndFails() async throws {
        // A sleep no other test runs, so that pgrep finds this one only.
        let seconds = "\(Int.random(in: 600_000...699_999))"
        let failure = await #expect(throws: TestKitError.self) {
            try await Command.run("/bin/sleep", [seconds], timeout: .milliseconds(300))
        }
        #expect(failure?.description.contains("/bin/sleep \(seconds) did not finish within") == true, "\(String(describing: failure))")
        // The command is gone: pgrep finds nothing (and so exits 1, which throws).
        try await eventually("the timed-out command to be killed") {
            (try? await Command.run("/usr/bin/pgrep", ["-fx", "/bin/sleep \(seconds)"])) == nil
        }
    }
}
