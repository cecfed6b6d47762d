import Foundation

#if canImport(Glibc)
import Glibc
#endif

extension ChildProcess {
    /// The name Swift's runtime gives the backtracer that a crashing Swift process starts as its child
    /// (with `SWIFT_BACKTRACE` enabled, as `make test` runs): the crashed process waits for it to write the
    /// report, then ends.
    static let backtracerName = "swift-backtrace"

    /// How long a backtracer may take to write its report before the process is killed all the same
    /// (symbolicating a debug build of `herald` takes seconds).
    static let crashReportTimeout = Duration.seconds(120)

    /// Whether the process has crashed and its backtracer is writing the crash report.
    public var isWritingCrashReport: Bool {
        isRunning && ProcessTable.children(of: pid).contains { $0.name == Self.backtracerName }
    }

    /// Waits while the process's backtracer writes its crash report, so that a SIGKILL at the end of a test
    /// does not lose the report (and leave the backtracer running, orphaned): the report is what fails
    /// `make test` for a crash that no test noticed. Returns at once when the process has not crashed.
    func awaitCrashReport() {
        let deadline = ContinuousClock.now + Self.crashReportTimeout
        while isWritingCrashReport, ContinuousClock.now < deadline {
            usleep(20_000)
        }
    }
}
