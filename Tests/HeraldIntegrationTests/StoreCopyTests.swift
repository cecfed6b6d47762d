import Foundation
import HeraldCore
import HeraldPluginAPI
import HeraldPostgres
import HeraldTestKit
import Logging
import Metrics
import Testing

@Suite("herald store copy: SQLite into PostgreSQL")
struct StoreCopyTests {
    static let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

    /// A SQLite store with every kind of row: messages in direct and group chats, reads (one waiting for its
    /// message), declared members, presence, undelivered outputs, a dead letter and a checkpoint.
    static func populatedStore(in directory: TemporaryDirectory) throws -> SQLiteChatStore {
        let store = try SQLiteChatStore(path: directory.path("store.sqlite"), durability: .normal)
        let router = EventRouter(store: store, policy: RouterPolicy(), routing: OutputRouting(sinkAccepts: [("push", Set(OutputKind.allCases))]),
                                 clock: SystemClock(), metrics: RouterMetrics(factory: NOOPMetricsHandler.instance), signal: OutboxSignal(),
                                 logger: logger)
        func record(_ event: ChatEvent) -> SourceRecord {
            SourceRecord(provenance: Provenance(adapter: "broker", origin: "t", rawSize: 1, receivedAt: Timestamp(milliseconds: 5)),
                         outcome: .event(event), raw: [])
        }
        var events: [ChatEvent] = [.chatCreated(ChatCreated(chat: "group", members: ["alice", "bob", "carol", "dave"]))]
        for index in 0..<300 {
            let sender = UserID(["alice", "bob", "carol"][index % 3])
            events.append(.messageReceived(MessageReceived(chat: index % 2 == 0 ? "group" : "direct", id: MessageID("m\(index)"), sender: sender,
                                                           recipients: index % 2 == 0 ? nil : ["dave"], body: "body \(index) ✓",
                                                           sentAt: Timestamp(milliseconds: Int64(1000 + index)))))
        }
        events += [
            .messagesRead(MessagesRead(reader: "dave", chat: "group", upTo: "m100", readAt: Timestamp(milliseconds: 9000))),
            .messagesRead(MessagesRead(reader: "dave", chat: "direct", upTo: "not-yet", readAt: Timestamp(milliseconds: 9000))),
            .chatOpened(ChatFocus(user: "bob", chat: "group")),
        ]
        let bad = SourceRecord(provenance: Provenance(adapter: "broker", origin: "chats/x/messages", rawSize: 3, receivedAt: Timestamp(milliseconds: 7)),
                               outcome: .rejected(Rejection(.malformedJSON, "not JSON")), raw: [0x7B, 0xFF, 0x00])
        _ = try router.commit(events.map(record) + [bad], checkpoints: [SourceCheckpoint(source: "feed", key: "cursor", value: "42")])
        return store
    }

    @Test func aCopiedStoreHasTheSameModelBadgesOutboxAndDeadLetters() async throws {
        let directory = try TemporaryDirectory(prefix: "herald-copy")
        let source = try Self.populatedStore(in: directory)
        let cluster = try await PostgresCluster.shared()
        let url = try await cluster.createDatabase()

        let copy = try ChildProcess(executable: HeraldProcess.binary, arguments: ["store", "copy", "--from", source.path, "--to", url, "--chunk", "64"],
                                    logPath: directory.path("copy.log"))
        let status = try await copy.waitForExit()
        #expect(status == 0, "\(copy.output)")
        #expect(copy.output.contains("messages: 64 / 300"), "progress on long tables: \(copy.output)")
        #expect(!copy.output.contains("MISMATCH"))

        let target = try await offCooperativePool { try PostgresChatStore(settings: PostgresStoreSettings(url: url), logger: Self.logger) }
        #expect(try target.modelSnapshot() == source.modelSnapshot())
        #expect(try target.statistics() == source.statistics())
        for user in ["alice", "bob", "carol", "dave"] {
            #expect(try target.badge(for: UserID(user)) == source.badge(for: UserID(user)), "badge of \(user)")
        }
        #expect(try target.unreadAgainstRecount().allSatisfy { $0.stored == $0.recounted })
        let outputs = try source.pendingOutputs(sink: "push", after: 0, limit: 10_000)
        let copied = try target.pendingOutputs(sink: "push", after: 0, limit: 10_000)
        #expect(copied.map(\.payload) == outputs.map(\.payload), "the outbox in its order")
        #expect(try target.deadLetters(limit: 10, includeReplayed: true).map(\.raw) == [[0x7B, 0xFF, 0x00]])
        #expect(try target.checkpoint(source: "feed", key: "cursor") == "42")

        // A second copy into the same database is refused: it would double the outbox.
        let again = try ChildProcess(executable: HeraldProcess.binary, arguments: ["store", "copy", "--from", source.path, "--to", url],
                                     logPath: directory.path("again.log"))
        #expect(try await again.waitForExit() != 0)
        #expect(again.output.contains("already holds 300 messages"), "\(again.output)")
    }

    /// `--schema` copies into the schema a gateway's `store.schema` names, and nothing into `public`.
    @Test func aStoreCopiedIntoASchemaIsTheSameStoreThere() async throws {
        let directory = try TemporaryDirectory(prefix: "herald-copy")
        let source = try Self.populatedStore(in: directory)
        let cluster = try await PostgresCluster.shared()
        let url = try await cluster.createDatabase()
        let copy = try ChildProcess(executable: HeraldProcess.binary, arguments: ["store", "copy", "--from", source.path, "--to", url, "--schema", "chats"],
                                    logPath: directory.path("copy.log"))
        #expect(try await copy.waitForExit() == 0, "\(copy.output)")
        #expect(copy.output.contains("(schema chats)"), "\(copy.output)")

        var settings = try PostgresStoreSettings(url: url)
        settings.schema = "chats"
        let opening = settings
        let target = try await offCooperativePool { try PostgresChatStore(settings: opening, logger: Self.logger) }
        #expect(try target.modelSnapshot() == source.modelSnapshot())
        #expect(try target.badge(for: "dave") == source.badge(for: "dave"))
        let database = String(url.split(separator: "/").last ?? "")
        #expect(try await cluster.psql(database: database, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")
            .trimmingCharacters(in: .whitespacesAndNewlines) == "0")
    }
}
