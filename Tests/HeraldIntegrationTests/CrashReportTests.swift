import Foundation
import HeraldTestKit
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `make test` fails on a crash report that a Swift process of the run wrote, even when no test noticed the
/// crash. A `herald` that crashes near the end of its test is killed when the test lets it go: the test kit
/// waits for Swift's backtracer to write the report first, or the report is lost and the backtracer left running.
@Suite("A herald that crashes leaves its crash report")
struct CrashReportTests {
    @Test func aCrashedHeraldIsKilledAtTheEndOfItsTestOnlyOnceItsReportIsWritten() async throws {
        let fixture = try await GatewayFixture()
        let reports = fixture.directory.path("crash-reports")
        // Reports of its own, so that this deliberate crash does not fail make test; without symbols, which
        // take the backtracer minutes on busy cores (without them it is done in well under a second).
        try FileManager.default.createDirectory(atPath: reports, withIntermediateDirectories: true)
        let log = fixture.directory.path("herald.log")
        var pid: pid_t = 0
        do {
            let herald = try HeraldProcess(configPath: fixture.configPath, logPath: log,
                                           environment: ["SWIFT_BACKTRACE": "enable=yes,interactive=no,symbolicate=off,output-to=\(reports)"])
            try await herald.waitUntilConnected()
            // The runtime's handler takes a SIGSEGV from kill(2) as it takes a bad access.
            pid = herald.child.pid
            herald.child.signal(SIGSEGV)
            // A backtracer without symbols may be done before it is seen (and a crash sent by kill(2) does not
            // end the process: returning from the handler, it goes on).
            try await eventually("herald's backtracer to start") {
                herald.child.isWritingCrashReport || !herald.child.isRunning
                    || !((try? FileManager.default.contentsOfDirectory(atPath: reports)) ?? []).isEmpty
            }
        }  // herald is released here, as at the end of a test, and killed if it still runs
        // Gone once its report is written (the test kit reaps it then); a kill before would lose the report.
        try await eventually("the crashed herald to end", timeout: .seconds(660)) {
            !FileManager.default.fileExists(atPath: "/proc/\(pid)")
        }
        let written = try FileManager.default.contentsOfDirectory(atPath: reports)
        #expect(written.count == 1 && written.allSatisfy { $0.hasPrefix("herald-") }, "reports: \(written)\n\((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
        let report = try written.first.map { try String(contentsOfFile: "\(reports)/\($0)", encoding: .utf8) } ?? ""
        #expect(report.contains("Program crashed"), "\(report.prefix(2_000))")
    }
}
