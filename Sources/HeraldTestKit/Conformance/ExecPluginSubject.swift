import Foundation
import HeraldCore
public import HeraldPluginAPI

#if canImport(Glibc)
import Glibc
#endif

/// A conformance subject for exec plugins that follow a JSON-lines file given as `--file` (like
/// `plugins/examples/jsonl_tail.py` and plugins made with `herald new-adapter NAME --exec`): inputs are
/// appended to the file; the upstream "goes away" when the plugin process is killed.
public struct ExecPluginSubject: SourceConformanceSubject {
    let registry: AdapterRegistry
    let plugin: String
    let directory: TemporaryDirectory
    var events: String { directory.path("events.jsonl") }

    /// Creates a subject for the plugin script at `plugin`, run with `python3`.
    public init(registry: AdapterRegistry, plugin: String) throws {
        self.registry = registry
        self.plugin = plugin
        directory = try TemporaryDirectory(prefix: "herald-exec-conformance")
        try directory.write("events.jsonl", "")
    }

    /// Builds the exec source.
    public func makeSource() throws -> any SourceAdapter {
        let yaml = """
            sources:
              - name: conformance
                type: exec
                command: ["python3", "\(plugin)", "--file", "\(events)", "--state", "\(directory.path("state"))"]
            """
        let configuration = try ConfigurationLoader(registry: registry, environment: [:]).load(text: yaml, file: "conformance")
        return try configuration.sources[0].settings.makeSource(name: "conformance")
    }

    /// Appends the input as one line.
    public func deliver(_ input: [UInt8], origin: String) async throws {
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: events))
        handle.seekToEndOfFile()
        handle.write(Data(input + [UInt8(ascii: "\n")]))
        try handle.close()
    }

    /// Kills the plugin process; the adapter must restart it.
    public func interruptUpstream() async throws {
        for entry in try FileManager.default.contentsOfDirectory(atPath: "/proc") {
            guard let pid = Int32(entry), let command = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline"),
                  String(decoding: command, as: UTF8.self).contains(directory.path("state")) else { continue }
            kill(pid, SIGKILL)
        }
    }
}
