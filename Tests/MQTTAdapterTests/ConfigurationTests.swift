import HeraldCore
import HeraldPluginAPI
import MQTTAdapter
import Testing

@Suite("Config loading: strict keys, located errors, interpolation")
struct ConfigurationTests {
    static let loader = ConfigurationLoader(registry: NormaliserTests.registry, environment: ["PASS": "s3cret", "HOST": "broker"])

    static func yaml(_ sourceLines: String) -> String {
        """
        store:
          path: /tmp/x.sqlite
        sources:
          - name: in
            type: mqtt
        \(sourceLines)
        """
    }

    static func error(_ text: String) -> ConfigurationError? {
        do {
            _ = try loader.load(text: text, file: "t.yaml")
            return nil
        } catch {
            return error
        }
    }

    @Test func misspelledKeyIsRejectedWithPositionPathAndSuggestion() {
        let error = Self.error(Self.yaml("    url: mqtt://h\n    client_id: c\n    keepalve: 5"))
        #expect(error?.line == 8 && error?.column == 5)
        #expect(error?.keyPath == "sources[0].keepalve")
        #expect(error?.message.contains("did you mean \"keepalive\"") == true)
    }

    @Test func typeErrorsPointAtTheValue() {
        let error = Self.error(Self.yaml("    url: mqtt://h\n    client_id: c\n    keepalive: soon"))
        #expect(error?.line == 8 && error?.column == 16)
        #expect(error?.message == "expected a whole number, found \"soon\"")
    }

    @Test func storeCacheSizeIsReadAndCheckedWithItsPosition() throws {
        let configured = try Self.loader.load(text: "store:\n  path: /tmp/x.sqlite\n  cache_mib: 32\n", file: "t.yaml")
        #expect(configured.store.cacheMiB == 32)
        #expect(try Self.loader.load(text: "store:\n  path: /tmp/x.sqlite\n", file: "t.yaml").store.cacheMiB == SQLiteChatStore.defaultCacheMiB)
        let error = Self.error("store:\n  path: /tmp/x.sqlite\n  cache_mib: 0\n")
        #expect(error?.keyPath == "store.cache_mib")
        #expect(error?.line == 3)
        #expect(error?.message == "must be 1…4096")
    }

    @Test func storeStatementTimeoutIsReadAndCheckedWithItsPosition() throws {
        let url = "store:\n  url: postgres://herald@127.0.0.1/chats\n"
        let configured = try Self.loader.load(text: url + "  statement_timeout_s: 4.5\n", file: "t.yaml")
        #expect(try configured.store.postgresSettings(environment: [:])?.statementTimeout == .milliseconds(4_500))
        let error = Self.error(url + "  statement_timeout_s: 0\n")
        #expect(error?.keyPath == "store.statement_timeout_s")
        #expect(error?.line == 3)
        #expect(error?.message == "must be 1…3600 seconds")
    }

    @Test func durabilityCarriesOverToPostgreSQLAndSQLiteOnlyKeysBesideAURLAreErrors() throws {
        let url = "store:\n  url: postgres://herald@127.0.0.1/chats\n"
        func settings(_ text: String) throws -> PostgresStoreSettings? {
            try Self.loader.load(text: text, file: "t.yaml").store.postgresSettings(environment: [:])
        }
        #expect(try settings(url)?.asynchronousCommit == false)
        #expect(try settings(url + "  durability: full\n")?.asynchronousCommit == false)
        #expect(try settings(url + "  durability: normal\n")?.asynchronousCommit == true)
        #expect(try Self.loader.load(text: url + "  durability: normal\n", file: "t.yaml").store.summary.hasSuffix("(durability normal: synchronous_commit off)"))
        for (key, value) in [("path", "/tmp/x.sqlite"), ("cache_mib", "4")] {
            let error = Self.error(url + "  \(key): \(value)\n")
            #expect(error?.keyPath == "store.\(key)")
            #expect(error?.line == 3)
            #expect(error?.message == "applies to SQLite only, and store.url selects PostgreSQL: remove one of them")
        }
    }

    @Test func sinkSendWindowIsReadAndCheckedWithItsPosition() throws {
        func sink(_ extra: String) -> String {
            "store:\n  path: /tmp/x.sqlite\nsinks:\n  - name: push\n    type: mqtt\n    url: mqtt://h\n    client_id: p\n\(extra)"
        }
        func window(_ text: String) throws -> Int? {
            (try Self.loader.load(text: text, file: "t.yaml").sinks.first?.settings as? MQTTSinkConfiguration)?.maxInflight
        }
        #expect(try window(sink("")) == MQTTSinkConfiguration.defaultMaxInflight)
        #expect(try window(sink("    max_inflight: 512\n")) == 512)
        let error = Self.error(sink("    max_inflight: 0\n"))
        #expect(error?.keyPath == "sinks[0].max_inflight")
        #expect(error?.line == 8)
        #expect(error?.message == "must be between 1 and 65535")
    }

    @Test func commitIntervalIsReadAndCheckedWithItsPosition() throws {
        func interval(_ extra: String) throws -> Int? {
            (try Self.loader.load(text: Self.yaml("    url: mqtt://h\n    client_id: c\n\(extra)"), file: "t.yaml")
                .sources.first?.settings as? MQTTSourceConfiguration)?.commitIntervalMilliseconds
        }
        #expect(try interval("") == MQTTSourceConfiguration.defaultCommitIntervalMilliseconds)
        #expect(try interval("    commit_interval_ms: 0") == 0)
        let error = Self.error(Self.yaml("    url: mqtt://h\n    client_id: c\n    commit_interval_ms: 5000"))
        #expect(error?.keyPath == "sources[0].commit_interval_ms")
        #expect(error?.line == 8)
        #expect(error?.message == "must be between 0 and 1000")
    }

    @Test func adapterValidationErrorsAreLocatedToo() {
        let error = Self.error(Self.yaml("    url: mqtt://h\n    client_id: c\n    subscriptions:\n      - topic: users/read\n        event: messages.read"))
        #expect(error?.keyPath == "sources[0].subscriptions[0].topic")
        #expect(error?.line == 9)
    }

    @Test func missingKeysAndUnknownTypesAreNamed() {
        #expect(Self.error(Self.yaml("    client_id: c"))?.message == "missing required key \"url\"")
        #expect(Self.error("sources:\n  - name: x\n    type: kafka\n")?.message.contains("unknown adapter type \"kafka\"") == true)
    }

    @Test func environmentInterpolationWithDefaultsAndMissingVariables() throws {
        let configuration = try Self.loader.load(text: Self.yaml("    url: mqtt://${HOST}:${PORT:-1884}\n    client_id: c\n    password: ${PASS}"), file: "t.yaml")
        let source = try #require(configuration.sources.first?.settings as? MQTTSourceConfiguration)
        #expect(source.connection.url == "mqtt://broker:1884")
        #expect(source.connection.password?.value == "s3cret")
        let missing = Self.error(Self.yaml("    url: mqtt://${NOPE}\n    client_id: c"))
        #expect(missing?.message.contains("environment variable NOPE is not set") == true)
    }

    @Test func secretsAreRedactedWhenPrinted() {
        #expect("\(Secret("s3cret"))" == "<redacted>")
    }
}
