import Foundation
import HeraldTestKit
import Testing

@Suite("Shipped configs pass `herald check`")
struct ShippedConfigTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func check(_ path: String) async throws -> (status: Int32, output: String) {
        let directory = try TemporaryDirectory()
        let child = try ChildProcess(executable: HeraldProcess.binary, arguments: ["check", "--config", path],
                                     logPath: directory.path("check.log"), environment: ["PATH": "/usr/bin:/bin"])
        return (try await child.waitForExit(), child.output)
    }

    @Test(arguments: ["deploy/config/herald.yaml", "plugins/mqtt/sample.yaml", "plugins/exec/sample.yaml"])
    func shippedConfigIsValid(_ relative: String) async throws {
        let result = try await Self.check(Self.root.appendingPathComponent(relative).path)
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("OK"))
    }

    @Test func brokenConfigFailsWithExitCode78AndALocation() async throws {
        let directory = try TemporaryDirectory()
        let text = try String(contentsOf: Self.root.appendingPathComponent("deploy/config/herald.yaml"), encoding: .utf8)
        let path = try directory.write("broken.yaml", text.replacingOccurrences(of: "retain_badges:", with: "retain_badge:"))
        let result = try await Self.check(path)
        #expect(result.status == 78)
        #expect(result.output.contains("broken.yaml:") && result.output.contains("sinks[0].retain_badge: unknown key"), "\(result.output)")
    }
}
