import Foundation
import HeraldCore
import HeraldPluginAPI
@testable import HeraldPostgres
import HeraldTestKit
import Logging
import Testing

/// A store made by an older Herald takes the newer migrations at start, with its data intact.
@Suite("PostgreSQL store: migrating a store that holds data")
struct PostgresMigrationTests {
    static let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

    /// Migration 5 gives identifier columns byte-wise comparison (their indexes are rebuilt); a store
    /// from before it keeps its messages, counters and outbox.
    @Test func identifierColumnsTurnByteWiseWithTheirDataKept() async throws {
        let harness = try await RouterHarness(.postgres)
        let store = try #require(harness.store as? PostgresChatStore)
        try await harness.commitMessages(20, overChats: 4)
        let outbox = try store.outboxDepth()
        #expect(outbox["sink"] ?? 0 > 20)
        let cluster = try await PostgresCluster.shared()
        let database = store.settings.database
        // The store as the previous Herald left it: the columns in the database's collation, version 4.
        let columns = try cluster.psql(database: database, """
            SELECT table_name || '.' || column_name FROM information_schema.columns
            WHERE table_schema = 'public' AND collation_name = 'C' AND column_name NOT IN ('id', 'message_id') ORDER BY 1
            """).split(separator: "\n").map(String.init)
        #expect(columns.count == 20, "\(columns)")
        for column in columns {
            let parts = column.split(separator: ".")
            try cluster.psql(database: database, "ALTER TABLE \(parts[0]) ALTER COLUMN \(parts[1]) TYPE text COLLATE \"default\"")
        }
        try cluster.psql(database: database, "DELETE FROM herald_schema_migrations WHERE version = 5")

        var announced: [String] = []
        let reopened = try PostgresChatStore(settings: store.settings, logger: Self.logger) { announced = $0 }
        #expect(announced == ["identifiers compare byte-wise (COLLATE \"C\"): chats, users, sinks, sources"])
        let byteWise = try cluster.psql(database: database, """
            SELECT count(*) FROM information_schema.columns
            WHERE table_schema = 'public' AND collation_name = 'C' AND column_name NOT IN ('id', 'message_id')
            """)
        #expect(byteWise.trimmingCharacters(in: .whitespacesAndNewlines) == "20")
        #expect(try reopened.statistics().messages == 20)
        #expect(try reopened.badge(for: "bob").unread == 20)
        #expect(try reopened.unreadAgainstRecount().allSatisfy { $0.stored == $0.recounted })
        #expect(try reopened.outboxDepth() == outbox)
    }
}
