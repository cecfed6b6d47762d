import Foundation
public import HeraldPluginAPI

/// The configuration reference as Markdown (`docs/configuration.md`), built from the same option
/// descriptions as `herald adapters` and the JSON Schema, so the page cannot drift from the code:
/// `herald adapters --markdown` prints it and a test compares it with the file.
public enum ConfigurationReference {
    /// The order the core sections appear in a config file.
    static let sectionOrder = ["store", "router", "outbox", "log", "admin", "instance"]

    /// The whole page.
    public static func markdown(registry: AdapterRegistry) -> String {
        var page = introduction
        for name in sectionOrder {
            guard let options = ConfigurationSchema.sections[name] else { continue }
            page += "\n## `\(name):`\n\n\(sectionSummaries[name] ?? "")\n\n" + table(options)
        }
        page += "\n## `sources:`\n\nA list; each item has a unique `name` and a `type`, then the adapter's own options.\n"
        for descriptor in registry.sources.values.sorted(by: { $0.type < $1.type }) {
            page += adapter(descriptor, kind: "source")
        }
        page += "\n## `sinks:`\n\nA list; each item has a unique `name` and a `type`, then the adapter's own options.\n"
        for descriptor in registry.sinks.values.sorted(by: { $0.type < $1.type }) {
            page += adapter(descriptor, kind: "sink")
        }
        return page
    }

    private static let introduction = """
        # Configuration reference

        <!-- Generated from the code's own option descriptions by `herald adapters --markdown` (`make docs`); \
        a test fails when this file and the code differ. -->

        Herald reads one YAML file: `--config FILE`, else `$HERALD_CONFIG`, else `./herald.yaml`. \
        [`deploy/config/herald.yaml`](../deploy/config/herald.yaml) is a complete, commented example, and each \
        adapter family ships a `sample.yaml` beside its README.

        - **Strict.** An unknown or misspelled key is an error, not ignored; `herald check --config FILE` reports \
        every problem with file, line, column and key path (`herald.yaml:27:5: sources[0].keepalve: unknown key \
        "keepalve"; did you mean "keepalive"?`) and exits 78, without touching the network.
        - **Environment.** `${VAR}` and `${VAR:-default}` are replaced from the environment in every value; `$$` \
        is a literal `$`.
        - **Secrets** can come from files (`password_file`, `token_file`, `secret_file`) and are never printed, \
        logged or shown by `herald check`.
        - **Editors.** `herald adapters --json-schema > herald.schema.json` writes a JSON Schema of the whole file \
        for YAML language servers; `herald adapters` prints the same options as text.
        - Numbers and booleans may also be written as strings, so that `${VAR}` can stand for them.

        Nested keys are written with dots (`tls.ca_file` is `ca_file` inside `tls:`) and list items with `[]` \
        (`subscriptions[].topic`).

        """

    private static let sectionSummaries = [
        "store": "Where the chat model, the outbox and the dead-letter queue live: a SQLite file (`path`, the default) "
            + "or a PostgreSQL database (`url`). See [the store](store.md).",
        "router": "How events change the model.",
        "outbox": "How committed outputs are handed to the sinks.",
        "log": "Logs go to standard error, one line per event that matters.",
        "admin": "The HTTP admin API: health, readiness, metrics, the live tail, store queries. "
            + "See [operations](operations.md#the-admin-api).",
        "instance": "Who this instance is when several share a PostgreSQL store. See [scale-out](scale-out.md).",
    ]

    private static func adapter<Configuration>(_ descriptor: AdapterDescriptor<Configuration>, kind: String) -> String {
        let family = familyReadme[descriptor.type].map { " See [its README](\($0))." } ?? ""
        return "\n### `type: \(descriptor.type)` (\(kind))\n\n\(descriptor.summary).\(family)\n\n"
            + table([AdapterOption("name", .string, required: true, "Unique instance name: in logs, metrics and the dead-letter queue")]
                    + descriptor.options)
    }

    /// Where each built-in type's README is, relative to `docs/`.
    private static let familyReadme = [
        "mqtt": "../plugins/mqtt/README.md", "exec": "../plugins/exec/README.md", "rest": "../plugins/rest/README.md",
        "http": "../plugins/http/README.md",
        "webhook": "../plugins/rest/README.md", "websocket": "../plugins/websocket/README.md",
    ]

    private static func table(_ options: [AdapterOption]) -> String {
        var rows = "| key | type | default | meaning |\n|---|---|---|---|\n"
        append(options, prefix: "", to: &rows)
        return rows
    }

    private static func append(_ options: [AdapterOption], prefix: String, to rows: inout String) {
        for option in options {
            let key = prefix + option.key
            let presence = option.required ? "required" : option.defaultValue.map { "`\($0)`" } ?? "—"
            rows += "| `\(key)` | \(escaped(option.typeName)) | \(escaped(presence)) | \(escaped(option.summary)) |\n"
            switch option.kind {
            case .object(let children): append(children, prefix: key + ".", to: &rows)
            case .objects(let children): append(children, prefix: key + "[].", to: &rows)
            default: continue
            }
        }
    }

    /// Table cells cannot hold a bare `|`.
    private static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "|", with: "\\|")
    }
}
