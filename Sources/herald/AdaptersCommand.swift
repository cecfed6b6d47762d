import ArgumentParser
import Foundation
import HeraldAdapters
import HeraldCore
import HeraldPluginAPI

/// `herald adapters`
struct AdaptersCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "adapters",
        abstract: "List the built-in source and sink adapters with their options, or print the config's JSON Schema.",
        discussion: """
            Point your editor's YAML language server at the schema: herald adapters --json-schema > herald.schema.json
            The configuration reference (docs/configuration.md) is the output of --markdown.
            """)

    @Flag(help: "Print a JSON Schema of the whole config file instead.") var jsonSchema = false
    @Flag(help: "Print the configuration reference as Markdown instead (docs/configuration.md).") var markdown = false

    func run() throws {
        let registry = BuiltinAdapters.registry
        if jsonSchema {
            print(ConfigurationSchema.text(registry: registry))
            return
        }
        if markdown {
            print(ConfigurationReference.markdown(registry: registry), terminator: "")
            return
        }
        for (title, descriptors) in [("Sources", registry.sources.values.map { ($0.type, $0.summary, $0.options) }),
                                     ("Sinks", registry.sinks.values.map { ($0.type, $0.summary, $0.options) })] {
            print("\(title)\n")
            for (type, summary, options) in descriptors.sorted(by: { $0.0 < $1.0 }) {
                print("  type: \(type)\n    \(summary)\n")
                printOptions(options, indent: "    ")
                print("")
            }
        }
    }

    private func printOptions(_ options: [AdapterOption], indent: String) {
        for option in options {
            let flags = option.required ? "required" : option.defaultValue.map { "default \($0)" } ?? "optional"
            print("\(indent)\(option.key.padding(toLength: max(option.key.count, 22), withPad: " ", startingAt: 0)) "
                  + "\(option.typeName), \(flags) — \(option.summary)")
            switch option.kind {
            case .object(let children), .objects(let children): printOptions(children, indent: indent + "  ")
            default: continue
            }
        }
    }
}
