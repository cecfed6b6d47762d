import Foundation
import HeraldTestKit
import Testing

/// `herald new-adapter` output builds and passes its own conformance test, in the tree as a developer has it
/// (built), without changing it: every step runs where the tree is, in a mount namespace of its own that lays a
/// writable overlay over it (the tree is the lower layer, a temporary directory takes every write). The build
/// then recompiles what the new adapters change, as it would for the developer. Where an overlay cannot be
/// mounted (no user namespaces, say), the steps run in a copy of the tree's files and build it from nothing.
/// `make test` runs this suite as its own step (`HERALD_SCAFFOLD_TEST=1`) after the others.
@Suite("herald new-adapter", .enabled(if: ProcessInfo.processInfo.environment["HERALD_SCAFFOLD_TEST"] == "1"))
struct ScaffoldTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    /// Where a step runs: the tree under an overlay, or a plain directory (a copy of the tree, the tree itself).
    enum Place {
        case overlay(upper: String, work: String, temporary: String)
        case directory(String, temporary: String? = nil)
    }

    /// Runs a shell command where `place` says. SwiftPM locks a build directory through a file named after its
    /// path in TMPDIR: the overlay's `.build` has the tree's path (whose lock this suite's own run holds), so the
    /// steps get a TMPDIR of their own, which also takes the copy's lock files away with the test's directory.
    static func run(_ command: String, in place: Place, log: String, timeout: Duration = .seconds(60)) async throws -> (Int32, String) {
        let child: ChildProcess
        switch place {
        case .directory(let directory, let temporary):
            let script = "cd \"$1\" && TMPDIR=\"${2:-${TMPDIR:-/tmp}}\" && export TMPDIR && eval \"$3\""
            child = try ChildProcess(executable: "/bin/sh", arguments: ["-c", script, "sh", directory, temporary ?? "", command], logPath: log)
        case .overlay(let upper, let work, let temporary):
            // Unprivileged, the namespace maps the user to root so that it may mount; the mount ends with it.
            let namespace = geteuid() == 0 ? ["--mount"] : ["--mount", "--map-root-user"]
            let script = "mount -t overlay overlay -o \"lowerdir=$1,upperdir=$2,workdir=$3\" \"$1\" && cd \"$1\" && TMPDIR=\"$4\" && export TMPDIR && eval \"$5\""
            child = try ChildProcess(executable: "/usr/bin/unshare",
                                     arguments: namespace + ["/bin/sh", "-c", script, "sh", root, upper, work, temporary, command], logPath: log)
        }
        return (try await child.waitForExit(timeout: timeout), child.output)
    }

    /// An overlay over the tree when this machine can mount one, else a copy of the tree's files.
    static func place(in work: TemporaryDirectory) async throws -> Place {
        let overlay = Place.overlay(upper: work.path("upper"), work: work.path("overlay-work"), temporary: work.path("tmp"))
        for directory in ["upper", "overlay-work", "tmp"] {
            try FileManager.default.createDirectory(atPath: work.path(directory), withIntermediateDirectories: true)
        }
        let probe = try? await run("test -f Package.swift", in: overlay, log: work.path("mount.log"))
        if probe?.0 == 0 { return overlay }
        let reason = probe?.1.trimmingCharacters(in: .whitespacesAndNewlines) ?? "unshare cannot run"
        print("No overlay over the tree (\(reason)): building a copy of it from nothing")
        let copy = work.path("tree")
        let (copied, copyLog) = try await run("mkdir -p '\(copy)' && git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t '\(copy)'",
                                              in: .directory(root), log: work.path("copy.log"))
        #expect(copied == 0, "\(copyLog)")
        return .directory(copy, temporary: work.path("tmp"))
    }

    @Test func generatedAdaptersBuildAndPassTheirConformanceTests() async throws {
        let work = try TemporaryDirectory(prefix: "herald-scaffold")
        let status = "git status --porcelain --untracked-files=all"
        let (_, statusBefore) = try await Self.run(status, in: .directory(Self.root), log: work.path("status-before.log"))
        let place = try await Self.place(in: work)
        for (index, arguments) in ["new-adapter demo", "new-adapter demox --exec"].enumerated() {
            let (created, output) = try await Self.run("'\(HeraldProcess.binary)' \(arguments)", in: place, log: work.path("new-\(index).log"))
            #expect(created == 0, "\(output)")
        }
        let (built, buildLog) = try await Self.run("swift build --build-tests", in: place, log: work.path("build.log"), timeout: .seconds(1800))
        #expect(built == 0, "\(buildLog.suffix(3000))")
        let (tested, testLog) = try await Self.run("swift test --skip-build --filter 'DemoConformance|DemoxExecConformance'", in: place,
                                                   log: work.path("test.log"), timeout: .seconds(300))
        #expect(tested == 0, "\(testLog.suffix(3000))")
        #expect(testLog.contains("Test run with 2 tests"), "\(testLog.suffix(2000))")
        let (checked, checkLog) = try await Self.run(".build/debug/herald check -c plugins/demo/sample.yaml && .build/debug/herald check -c plugins/demox/sample.yaml",
                                                     in: place, log: work.path("check.log"))
        #expect(checked == 0, "\(checkLog)")
        let (_, statusAfter) = try await Self.run(status, in: .directory(Self.root), log: work.path("status-after.log"))
        #expect(statusAfter == statusBefore, "the tree itself changed: \(statusAfter)")
        // The overlay's work directory keeps a directory no one may read; the temporary directory's removal needs to.
        _ = try await Self.run("chmod -R u+rwx overlay-work", in: .directory(work.url.path), log: work.path("chmod.log"))
    }
}
