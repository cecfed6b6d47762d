import Foundation
import HeraldTestKit
import Testing

/// `herald new-adapter` output builds and passes its own conformance test, in a temporary copy of the tree.
/// Building a whole copy takes minutes, so `make test` runs this suite as its own step
/// (`HERALD_SCAFFOLD_TEST=1`) after the others, instead of alongside timing-sensitive tests.
@Suite("herald new-adapter", .enabled(if: ProcessInfo.processInfo.environment["HERALD_SCAFFOLD_TEST"] == "1"))
struct ScaffoldTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func run(_ arguments: [String], in directory: String, log: String, timeout: Duration = .seconds(60)) async throws -> (Int32, String) {
        let child = try ChildProcess(executable: "/usr/bin/env", arguments: ["sh", "-c", "cd '\(directory)' && " + arguments.joined(separator: " ")],
                                     logPath: log)
        return (try await child.waitForExit(timeout: timeout), child.output)
    }

    @Test func generatedAdaptersBuildAndPassTheirConformanceTests() async throws {
        let work = try TemporaryDirectory(prefix: "herald-scaffold")
        let copy = work.path("tree")
        let (copied, copyLog) = try await Self.run(
            ["mkdir -p '\(copy)' && git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t '\(copy)'"],
            in: Self.root.path, log: work.path("copy.log"))
        #expect(copied == 0, "\(copyLog)")
        for arguments in [["new-adapter", "demo"], ["new-adapter", "demox", "--exec"]] {
            let (status, output) = try await Self.run(["'\(HeraldProcess.binary)'"] + arguments, in: copy, log: work.path("new-\(arguments[1]).log"))
            #expect(status == 0, "\(output)")
        }
        let (built, buildLog) = try await Self.run(["swift build --build-tests"], in: copy, log: work.path("build.log"), timeout: .seconds(1800))
        #expect(built == 0, "\(buildLog.suffix(3000))")
        let (tested, testLog) = try await Self.run(["swift test --skip-build --filter 'DemoConformance|DemoxExecConformance'"], in: copy,
                                                   log: work.path("test.log"), timeout: .seconds(300))
        #expect(tested == 0, "\(testLog.suffix(3000))")
        #expect(testLog.contains("Test run with 2 tests"), "\(testLog.suffix(2000))")
        let (checked, checkLog) = try await Self.run([".build/debug/herald check -c plugins/demo/sample.yaml && .build/debug/herald check -c plugins/demox/sample.yaml"],
                                                     in: copy, log: work.path("check.log"))
        #expect(checked == 0, "\(checkLog)")
    }
}
