import Foundation
import HeraldCore
import HeraldPostgres
import Testing
import HeraldPluginAPI
import HeraldTestKit
import Metrics
import Synchronization

/// A clock the test moves by hand.
final class ManualClock: WallClock {
    private let current = Mutex(Timestamp(milliseconds: 1_700_000_000_000))
    func now() -> Timestamp { current.withLock { $0 } }
    func advance(milliseconds: Int64) { current.withLock { $0 = $0.adding(milliseconds: milliseconds) } }
}

/// The store backends every router and store test runs against.
enum StoreBackend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case postgres

    var testDescription: String { rawValue }

    /// A new, empty store: a SQLite file in `directory`, or a new database on the test process's
    /// PostgreSQL cluster.
    func makeStore(in directory: TemporaryDirectory) async throws -> any ChatStoreInspection {
        switch self {
        case .sqlite:
            return try SQLiteChatStore(path: directory.path("store.sqlite"), durability: .normal)
        case .postgres:
            let url = try await PostgresCluster.shared().createDatabase()
            return try await offCooperativePool {
                try PostgresChatStore(settings: PostgresStoreSettings(url: url),
                                      logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
            }
        }
    }
}

/// A router over a real store (a SQLite file or a PostgreSQL database), with every output routed to one sink.
struct RouterHarness: Sendable {
    let directory: TemporaryDirectory
    let store: any ChatStoreInspection
    let router: EventRouter
    let clock = ManualClock()

    init(_ backend: StoreBackend = .sqlite, policy: RouterPolicy = RouterPolicy(),
         metrics: any MetricsFactory = NOOPMetricsHandler.instance) async throws {
        let directory = try TemporaryDirectory()
        try self.init(store: await backend.makeStore(in: directory), in: directory, policy: policy, metrics: metrics)
    }

    /// A router over `store`, which the caller made (in `directory`, if it keeps files).
    init(store: any ChatStoreInspection, in directory: TemporaryDirectory, policy: RouterPolicy = RouterPolicy(),
         metrics: any MetricsFactory = NOOPMetricsHandler.instance) throws {
        self.directory = directory
        self.store = store
        router = EventRouter(store: store, policy: policy,
                             routing: OutputRouting(sinkAccepts: [("sink", Set(OutputKind.allCases))]), clock: clock,
                             metrics: RouterMetrics(factory: metrics), signal: OutboxSignal(),
                             logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
    }

    /// The store, for SQLite-only tests.
    var sqlite: SQLiteChatStore { store as! SQLiteChatStore }

    func record(_ event: ChatEvent) -> SourceRecord {
        SourceRecord(provenance: Provenance(adapter: "test", origin: "t", rawSize: 0, receivedAt: clock.now()), outcome: .event(event), raw: [])
    }

    /// Commits `count` messages from alice to bob over `chats` chats (`c0`, `c1`, …) in one batch, off
    /// the cooperative pool.
    func commitMessages(_ count: Int, overChats chats: Int) async throws {
        try await offCooperativePool {
            _ = try router.commit((0..<count).map { index in
                record(message(ChatID("c\(index % chats)"), MessageID("m\(index)"), from: "alice", to: ["bob"], at: Int64(1000 + index)))
            })
        }
    }

    /// Applies events (one commit) and returns the report.
    @discardableResult
    func apply(_ events: ChatEvent...) throws -> IngestReport { try apply(events) }

    /// Applies events (one commit) and returns the report.
    @discardableResult
    func apply(_ events: [ChatEvent]) throws -> IngestReport { try router.commit(events.map(record)) }

    /// Applies events and returns only the outputs they produced (draining the outbox).
    func outputs(_ events: ChatEvent...) throws -> [Output] { try outputs(events) }

    /// Applies events (one commit) and returns only the outputs they produced (draining the outbox).
    func outputs(_ events: [ChatEvent]) throws -> [Output] {
        try drain()
        _ = try router.commit(events.map(record))
        return try drain()
    }

    /// Removes and returns everything queued.
    @discardableResult
    func drain() throws -> [Output] {
        let pending = try store.pendingOutputs(sink: "sink", after: 0, limit: 100_000)
        try store.removeOutputs(sink: "sink", delivered: pending.map(\.sequence))
        return try pending.map { try $0.decodeOutput() }
    }

    func badge(_ user: UserID) throws -> BadgeUpdate { try store.badge(for: user) }
}

func message(_ chat: ChatID, _ id: MessageID, from sender: UserID, to recipients: [UserID]? = nil, body: String = "hello",
             at sentAt: Int64 = 1000) -> ChatEvent {
    .messageReceived(MessageReceived(chat: chat, id: id, sender: sender, recipients: recipients, body: body,
                                     sentAt: Timestamp(milliseconds: sentAt)))
}

func read(_ reader: UserID, _ chat: ChatID, upTo: MessageID) -> ChatEvent {
    .messagesRead(MessagesRead(reader: reader, chat: chat, upTo: upTo, readAt: Timestamp(milliseconds: 5000)))
}

/// `events` without the reads whose fate depends on order: a read from someone missing from one of the
/// chat's `chat.created` is refused when that event came first and applied otherwise. Order-independence
/// properties hold for the rest; the refusal itself has tests of its own.
func withoutOrderDependentReads(_ events: [ChatEvent]) -> [ChatEvent] {
    var declaredIn: [ChatID: [Set<UserID>]] = [:]
    for case .chatCreated(let created) in events { declaredIn[created.chat, default: []].append(Set(created.members)) }
    return events.filter { event in
        guard case .messagesRead(let read) = event else { return true }
        return (declaredIn[read.chat] ?? []).allSatisfy { $0.contains(read.reader) }
    }
}

extension Output {
    var notification: InAppNotification? { if case .notification(let value) = self { value } else { nil } }
    var live: LiveMessage? { if case .liveMessage(let value) = self { value } else { nil } }
    var receipt: ReadReceipt? { if case .readReceipt(let value) = self { value } else { nil } }
    var badgeUpdate: BadgeUpdate? { if case .badge(let value) = self { value } else { nil } }
}

extension StoreBackend {
    /// Runs of a property test: each run creates stores, and a PostgreSQL database takes longer to make.
    var propertyRuns: Int { self == .sqlite ? 60 : 20 }
}

