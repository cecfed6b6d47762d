import ExecAdapter
import Foundation
import HeraldAdapters
import HeraldCore
import HeraldPluginAPI
import HeraldTestKit
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The exec source, with the example plugin following a file, passes the conformance kit.
struct ExecConformanceSubject: SourceConformanceSubject {
    let directory: TemporaryDirectory
    var events: String { directory.path("events.jsonl") }

    func makeSource() throws -> any SourceAdapter {
        let yaml = """
            sources:
              - name: conformance
                type: exec
                command: ["python3", "\(ExecAdapterTests.plugin)", "--file", "\(events)", "--state", "\(directory.path("state"))"]
            """
        let configuration = try ConfigurationLoader(registry: BuiltinAdapters.registry, environment: [:]).load(text: yaml, file: "conformance")
        return try configuration.sources[0].settings.makeSource(name: "conformance")
    }

    func deliver(_ input: [UInt8], origin: String) async throws {
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: events))
        handle.seekToEndOfFile()
        handle.write(Data(input + [UInt8(ascii: "\n")]))
        try handle.close()
    }

    /// The upstream is the plugin process: kill it; the adapter must restart it.
    func interruptUpstream() async throws {
        for entry in try FileManager.default.contentsOfDirectory(atPath: "/proc") {
            guard let pid = Int32(entry), let command = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline"),
                  String(decoding: command, as: UTF8.self).contains(directory.path("state")) else { continue }
            kill(pid, SIGKILL)
        }
    }
}

@Suite("Exec source conformance", .serialized)
struct ExecConformanceTests {
    @Test func theExecSourcePassesTheConformanceKit() async throws {
        let fixtures = try ConformanceFixture.load(from: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/exec"))
        #expect(fixtures.count == 3)
        let directory = try TemporaryDirectory(prefix: "herald-exec-conformance")
        try directory.write("events.jsonl", "")
        let failures = try await SourceConformance.check(ExecConformanceSubject(directory: directory), fixtures: fixtures, adapter: "conformance")
        #expect(failures.isEmpty, "\(failures)")
    }
}
