import Foundation
import HeraldTestKit

/// A plain Python bridge (paho-mqtt + sqlite3, batched commits, acks after commit: `python_bridge.py`
/// beside this file) draining the same backlog Herald drains: the "what a team would write first"
/// baseline. Timed like `mosquitto_sub` and Herald, from the process's start until it has committed the
/// last message, start-up included.
func pythonBridgePhase(_ workload: Workload, directory: TemporaryDirectory) async throws -> PhaseResult {
    let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("python_bridge.py").path
    guard FileManager.default.fileExists(atPath: script) else { throw TestKitError("\(script) not found (run herald-bench from its checkout)") }
    let broker = try await MosquittoBroker()
    let database = directory.path("python-bridge-\(UUID().uuidString.prefix(8)).sqlite")
    let common = [script, "--port", "\(broker.port)", "--client-id", "bench-python", "--db", database]
    let create = try ChildProcess(executable: "/usr/bin/env", arguments: ["python3"] + common + ["--create"],
                                  logPath: directory.path("python-create.log"))
    guard try await create.waitForExit() == 0 else {
        throw TestKitError("the Python bridge did not start (make bench installs paho-mqtt):\n\(create.output)")
    }
    try await publish(workload, port: broker.port)
    let started = ContinuousClock.now
    let drain = try ChildProcess(executable: "/usr/bin/env", arguments: ["python3"] + common + ["--count", "\(workload.messages)"],
                                 logPath: directory.path("python-drain.log"))
    let status = try await drain.waitForExit(timeout: .seconds(900))
    let elapsed = seconds(ContinuousClock.now - started)
    guard status == 0 else { throw TestKitError("the Python bridge exited with \(status):\n\(drain.output)") }
    return PhaseResult(rate: Double(workload.messages) / elapsed)
}

/// Herald's backlog drain beside the Python bridge's (the target is 3×).
func pythonRow(herald: PhaseResult, python: PhaseResult) -> String {
    "Python bridge (paho-mqtt + sqlite3, batched commits) backlog \(format(python.rate)) msg/s; "
        + "Herald / Python bridge = \(format(herald.rate / python.rate, 2)) (target ≥ 3)"
}
