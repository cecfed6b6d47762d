import Dispatch
import Foundation

#if canImport(Glibc)
import Glibc
#endif

extension ChildProcess {
    /// The name Swift's runtime gives the backtracer that a crashing Swift process starts as its child
    /// (with `SWIFT_BACKTRACE` enabled, as `make test` runs): the crashed process waits for it to write the
    /// report, then ends.
    static let backtracerName = "swift-backtrace"

    /// How long a backtracer may take to write its report before the process is killed all the same: a
    /// debug build of `herald` takes it about 10 s on an idle machine, and more than two minutes on two
    /// cores that the rest of the test run keeps busy.
    static let crashReportTimeout = Duration.seconds(600)

    /// Whether the process has crashed and its backtracer is writing the crash report.
    public var isWritingCrashReport: Bool { isRunning && Self.isBacktracing(pid) }

    static func isBacktracing(_ pid: pid_t) -> Bool {
        ProcessTable.children(of: pid).contains { $0.name == backtracerName }
    }

    /// Kills `pid` once its backtracer has written the crash report, and reaps it, on a thread of its own:
    /// a SIGKILL meanwhile would lose the report that fails `make test` (and leave the backtracer running),
    /// and waiting on one of Swift's few cooperative threads would stall the tests beside it.
    static func killAfterCrashReport(_ pid: pid_t) {
        DispatchQueue(label: "herald-test-crash-report").async {
            let deadline = ContinuousClock.now + crashReportTimeout
            while isBacktracing(pid), ContinuousClock.now < deadline { usleep(20_000) }
            kill(pid, SIGKILL)
            var raw: Int32 = 0
            waitpid(pid, &raw, 0)
        }
    }
}
