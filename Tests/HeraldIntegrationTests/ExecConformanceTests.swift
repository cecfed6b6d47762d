import Foundation
import HeraldAdapters
import HeraldTestKit
import Testing

@Suite("Exec source conformance", .serialized)
struct ExecConformanceTests {
    @Test func theExecSourcePassesTheConformanceKit() async throws {
        let fixtures = try ConformanceFixture.load(from: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/exec"))
        #expect(fixtures.count == 3)
        let subject = try ExecPluginSubject(registry: BuiltinAdapters.registry, plugin: ExecAdapterTests.plugin)
        let failures = try await SourceConformance.check(subject, fixtures: fixtures, adapter: "conformance")
        #expect(failures.isEmpty, "\(failures)")
    }
}
