import Foundation
import HeraldCore
import HeraldTestKit

/// What one `wrk` run against the HTTP source measured.
struct HTTPPhaseResult {
    /// Events stored per second.
    var eventsPerSecond: Double
    /// Requests answered per second (202 and others).
    var requestsPerSecond: Double
    /// Requests not answered 202 (429 when the server is full, and errors).
    var refused: Int
    /// Request latency percentiles from wrk, milliseconds.
    var p50Milliseconds: Double
    var p99Milliseconds: Double
    /// Herald's CPU seconds per 1000 events.
    var cpuPerThousand: Double

    var report: String {
        "\(format(eventsPerSecond)) events/s (\(format(requestsPerSecond)) requests/s, latency p50 \(format(p50Milliseconds, 2)) ms "
            + "p99 \(format(p99Milliseconds, 2)) ms, \(refused) not 202, CPU \(format(cpuPerThousand, 3)) s/1000 events)"
    }
}

/// Herald's HTTP source under `wrk` on loopback for `seconds`: `connections` clients each POST a
/// request of `eventsPerRequest` new direct-chat messages as soon as the previous one is answered. The
/// MQTT source is configured too (idle), as in the other phases, so the gateway is the same.
func httpPhase(_ workload: Workload, eventsPerRequest: Int, connections: Int = 32, seconds: Int = 10,
               directory: TemporaryDirectory) async throws -> HTTPPhaseResult {
    let broker = try await MosquittoBroker()
    let port = try Loopback.freePort()
    var configuration = try workload.configuration(port: broker.port, storePath: directory.path("http-\(eventsPerRequest).sqlite"))
    configuration.storeURL = try await workload.postgres?.createDatabase()
    configuration.sourceExtra = workload.sourceOptions.map { $0 + "\n" }.joined()
        + "  - name: api\n    type: http\n    listen: 127.0.0.1:\(port)\n    tokens: [bench-token]\n    max_in_flight: \(connections * 2)"
    let configPath = try directory.write("http-\(eventsPerRequest).yaml", configuration.yaml)
    let herald = try HeraldProcess(configPath: configPath, logPath: directory.path("herald-http-\(eventsPerRequest).log"))
    try await eventually("the HTTP source to listen") {
        guard herald.child.isRunning else { throw TestKitError("herald exited:\n\(herald.child.output)") }
        return herald.child.output.contains("HTTP source listening.")
    }
    let script = try directory.write("post-\(eventsPerRequest).lua", wrkScript(eventsPerRequest: eventsPerRequest, chats: workload.chats))
    let cpuBefore = ProcessStats(pid: herald.child.pid).cpuSeconds
    let store = try inspection(of: configuration)
    let before = try store.statistics().messages
    let wrk = try ChildProcess(executable: "/usr/bin/wrk", arguments: [
        "-t2", "-c\(connections)", "-d\(seconds)s", "--latency", "--timeout", "30s", "-s", script, "http://127.0.0.1:\(port)/v1/events",
    ], logPath: directory.path("wrk-\(eventsPerRequest).log"))
    guard try await wrk.waitForExit(timeout: .seconds(Int64(seconds + 60))) == 0 else { throw TestKitError("wrk failed:\n\(wrk.output)") }
    let stored = try store.statistics().messages - before
    let heraldCPU = ProcessStats(pid: herald.child.pid).cpuSeconds - cpuBefore
    herald.child.signal(SIGTERM)
    _ = try await herald.child.waitForExit()
    let output = wrk.output
    func number(after label: String, in section: String = "") -> Double? {
        let start = output.range(of: section)?.upperBound ?? output.startIndex
        guard let range = output.range(of: label, range: start..<output.endIndex) else { return nil }
        let text = output[range.upperBound...].drop { $0 == " " || $0 == "\t" }.prefix { !$0.isWhitespace }
        return milliseconds(String(text)) ?? Double(text)
    }
    return HTTPPhaseResult(
        eventsPerSecond: Double(stored) / Double(seconds), requestsPerSecond: number(after: "Requests/sec:") ?? 0,
        refused: Int(number(after: "Non-2xx or 3xx responses:") ?? 0),
        p50Milliseconds: number(after: " 50%", in: "Latency Distribution") ?? 0,
        p99Milliseconds: number(after: " 99%", in: "Latency Distribution") ?? 0,
        cpuPerThousand: heraldCPU / Double(max(1, stored)) * 1000)
}

/// wrk's durations (`812.00us`, `3.21ms`, `1.02s`) in milliseconds.
private func milliseconds(_ text: String) -> Double? {
    for (suffix, factor) in [("us", 0.001), ("ms", 1.0), ("s", 1000.0)] where text.hasSuffix(suffix) {
        return Double(text.dropLast(suffix.count)).map { $0 * factor }
    }
    return nil
}

/// A wrk script whose every request carries new messages: ids are unique per thread and request.
private func wrkScript(eventsPerRequest: Int, chats: Int) -> String {
    """
    local counter = 0
    local threads = 0
    function setup(thread)
      threads = threads + 1
      thread:set("tid", threads)
    end
    function request()
      counter = counter + 1
      local events = {}
      for k = 1, \(eventsPerRequest) do
        local n = counter * \(eventsPerRequest) + k
        local chat = n % \(chats)
        events[k] = string.format('{"type":"message.received","chat":"c%d","id":"h%d-%d","from":"u%d","to":["u%d"],'
          .. '"body":"lorem ipsum dolor sit amet consectetur adipiscing","sent_at":%d}', chat, tid, n, chat * 2, chat * 2 + 1, 1763800000000 + n)
      end
      local body = \(eventsPerRequest == 1 ? "events[1]" : "\"[\" .. table.concat(events, \",\") .. \"]\"")
      return wrk.format("POST", nil, {["Content-Type"] = "application/json", ["Authorization"] = "Bearer bench-token"}, body)
    end
    """
}
