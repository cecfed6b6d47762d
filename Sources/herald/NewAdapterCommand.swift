import ArgumentParser
import Foundation

/// `herald new-adapter NAME [--exec]`
struct NewAdapterCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "new-adapter",
        abstract: "Create a new source adapter that builds and passes its conformance test at once.",
        discussion: """
            Compiled (default): plugins/NAME/<Name>Adapter/ (configuration, descriptor, source following a JSON-lines file), \
            plugins/NAME/README.md and sample.yaml, Tests/<Name>AdapterTests/ (conformance test and a fixture), and the \
            registration in Package.swift and Sources/HeraldAdapters/BuiltinAdapters.swift.
            --exec: plugins/NAME/plugin.py (a Python plugin following a JSON-lines file, from plugins/examples), README.md, \
            sample.yaml (type: exec) and a conformance test with a fixture; exec plugins need no registration.
            Then: swift build --build-tests && swift test --filter <Name>. See docs/adapters.md.
            """)

    @Argument(help: "Adapter type name: lowercase letters and digits, starting with a letter (e.g. imap).") var name: String
    @Flag(help: "Create an exec plugin (any language) instead of a compiled Swift adapter.") var exec = false
    @Option(help: "The Herald source tree (default: the current directory).") var root = "."

    func validate() throws {
        guard let first = name.first, first.isLowercase, name.allSatisfy({ $0.isLowercase || $0.isNumber }), name.count <= 32 else {
            throw ValidationError("NAME must be lowercase letters and digits, starting with a letter")
        }
    }

    func run() throws {
        let typeName = name.prefix(1).uppercased() + name.dropFirst()
        let base = URL(fileURLWithPath: root)
        guard FileManager.default.fileExists(atPath: base.appendingPathComponent("Package.swift").path) else {
            throw ValidationError("\(root) is not the Herald source tree (no Package.swift); pass --root")
        }
        let folder = base.appendingPathComponent("plugins/\(name)")
        guard !FileManager.default.fileExists(atPath: folder.path) else { throw ValidationError("plugins/\(name) exists already") }
        func fill(_ template: String) -> String {
            template.replacingOccurrences(of: "__Name__", with: typeName).replacingOccurrences(of: "__name__", with: name)
        }
        var created: [String] = []
        func write(_ relative: String, _ text: String) throws {
            let url = base.appendingPathComponent(relative)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try text.write(to: url, atomically: true, encoding: .utf8)
            created.append(relative)
        }
        if exec {
            let example = try String(contentsOf: base.appendingPathComponent("plugins/examples/jsonl_tail.py"), encoding: .utf8)
            try write("plugins/\(name)/plugin.py", example)
            try write("plugins/\(name)/sample.yaml", """
                # \(name): an exec plugin. `herald check -c plugins/\(name)/sample.yaml` validates this file.
                sources:
                  - name: \(name)
                    type: exec
                    command: ["python3", "plugins/\(name)/plugin.py", "--file", "var/\(name).jsonl", "--state", "var/\(name).offset"]
                    max_unacked: 1000

                """)
            try write("plugins/\(name)/README.md", readme(typeName: typeName, exec: true))
            try write("Tests/HeraldIntegrationTests/\(typeName)ExecConformanceTests.swift", fill(ScaffoldTemplates.execTest))
            try write("Tests/HeraldIntegrationTests/Fixtures/\(name)/01-message/input", ScaffoldTemplates.fixtureInput)
            try write("Tests/HeraldIntegrationTests/Fixtures/\(name)/01-message/expected-events.json", ScaffoldTemplates.fixtureExpected + "\n")
        } else {
            try write("plugins/\(name)/\(typeName)Adapter/\(typeName)SourceConfiguration.swift", fill(ScaffoldTemplates.configuration))
            try write("plugins/\(name)/\(typeName)Adapter/\(typeName)Source.swift", fill(ScaffoldTemplates.source))
            try write("plugins/\(name)/sample.yaml", """
                # \(name): `herald check -c plugins/\(name)/sample.yaml` validates this file.
                sources:
                  - name: \(name)
                    type: \(name)
                    path: var/\(name).jsonl
                    max_batch: 500

                """)
            try write("plugins/\(name)/README.md", readme(typeName: typeName, exec: false))
            try write("Tests/\(typeName)AdapterTests/\(typeName)ConformanceTests.swift", fill(ScaffoldTemplates.test))
            try write("Tests/\(typeName)AdapterTests/Fixtures/01-message/input", ScaffoldTemplates.fixtureInput)
            try write("Tests/\(typeName)AdapterTests/Fixtures/01-message/expected-events.json", ScaffoldTemplates.fixtureExpected + "\n")
            try register(typeName: typeName, base: base)
            created += ["Package.swift (targets)", "Sources/HeraldAdapters/BuiltinAdapters.swift (registration)"]
        }
        print("Created the \(exec ? "exec plugin" : "adapter") \(name):")
        created.forEach { print("  \($0)") }
        print("\nNext: swift build --build-tests && swift test --filter \(typeName)   (guide: docs/adapters.md)")
    }

    /// Adds the targets to Package.swift and the descriptor to the registry list.
    private func register(typeName: String, base: URL) throws {
        let packageURL = base.appendingPathComponent("Package.swift")
        var package = try String(contentsOf: packageURL, encoding: .utf8)
        let marker = #"dependencies: ["HeraldPluginAPI", "MQTTAdapter""#
        guard package.contains(marker), let end = package.range(of: "\n    ]\n)", options: .backwards) else {
            throw ValidationError("Package.swift does not have the expected shape; register the targets by hand (docs/adapters.md)")
        }
        package.replaceSubrange(end, with: """

                .target(name: "\(typeName)Adapter", dependencies: ["HeraldPluginAPI"], path: "plugins/\(name)/\(typeName)Adapter",
                        swiftSettings: strict),
                .testTarget(name: "\(typeName)AdapterTests", dependencies: ["HeraldAdapters", "HeraldCore", "HeraldTestKit"],
                            exclude: ["Fixtures"], swiftSettings: strict),
            ]
        )
        """)
        package = package.replacingOccurrences(of: marker, with: #"dependencies: ["HeraldPluginAPI", "\#(typeName)Adapter", "MQTTAdapter""#)
        try package.write(to: packageURL, atomically: true, encoding: .utf8)

        let registryURL = base.appendingPathComponent("Sources/HeraldAdapters/BuiltinAdapters.swift")
        var registry = try String(contentsOf: registryURL, encoding: .utf8)
        guard registry.contains("import MQTTAdapter"), registry.contains("            .with(source: MQTTAdapters.source)") else {
            throw ValidationError("BuiltinAdapters.swift does not have the expected shape; register \(typeName)Adapters.source by hand")
        }
        registry = registry.replacingOccurrences(of: "import MQTTAdapter", with: "import MQTTAdapter\nimport \(typeName)Adapter")
        registry = registry.replacingOccurrences(of: "            .with(source: MQTTAdapters.source)",
                                                 with: "            .with(source: MQTTAdapters.source)\n            .with(source: \(typeName)Adapters.source)")
        try registry.write(to: registryURL, atomically: true, encoding: .utf8)
    }

    private func readme(typeName: String, exec: Bool) -> String {
        exec ? """
            # \(name) (`type: exec`)

            An exec plugin generated by `herald new-adapter \(name) --exec`: `plugin.py` follows a JSON-lines file of events and
            speaks Herald's exec protocol (plugins/exec/PROTOCOL.md). Replace its upstream with yours.

            | option | default | meaning |
            |---|---|---|
            | `command` | — | `["python3", "plugins/\(name)/plugin.py", "--file", FILE, "--state", STATE]` |
            | `max_unacked` | `1000` | events read but not answered, at most |

            Example: see `sample.yaml`. Test: `swift test --filter \(typeName)ExecConformance`.

            """ : """
            # \(name) (`type: \(name)`)

            A source adapter generated by `herald new-adapter \(name)`: it follows a JSON-lines file of events (Herald's
            payload shape with a `type`) and moves its position only after each commit. Replace the upstream with yours.

            | option | default | meaning |
            |---|---|---|
            | `path` | — (required) | the file to follow |
            | `max_batch` | `500` | lines read before one commit |

            Example: see `sample.yaml`. Test: `swift test --filter \(typeName)Conformance`.

            """
    }
}
