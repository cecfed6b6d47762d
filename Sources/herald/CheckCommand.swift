import ArgumentParser
import HeraldCore
import HeraldPostgres

/// `herald check`
struct CheckCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Validate a config file without touching the network.",
        discussion: """
            Checks YAML syntax, unknown or misspelled keys, types, values, ${VAR} interpolation, readable \
            certificate and password files, and topic templates. Errors name the file, line, column and key \
            path; the exit status is 78 (EX_CONFIG) on error. The systemd unit runs this before start.
            """)

    @OptionGroup var config: ConfigOption

    func run() async throws {
        let configuration = try config.load()
        let sources = configuration.sources.map { "\($0.name) (\($0.type))" }.joined(separator: ", ")
        let sinks = configuration.sinks.map { "\($0.name) (\($0.type))" }.joined(separator: ", ")
        print("\(config.path): OK")
        print("  store:   \(configuration.store.summary)")
        print("  sources: \(sources.isEmpty ? "none" : sources)")
        print("  sinks:   \(sinks.isEmpty ? "none" : sinks)")
    }
}
