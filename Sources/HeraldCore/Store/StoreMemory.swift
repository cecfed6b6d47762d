import HeraldPluginAPI
import Synchronization

/// What the single writer remembers across transactions: badges, memberships, read positions and
/// presence, exactly as committed. Because the router is the only writer, these stay true without
/// re-reading; the memory is dropped whenever another connection commits (`PRAGMA data_version`
/// changes, e.g. `herald dlq replay` run alongside) and when it grows past its bound.
final class StoreMemory: Sendable {
    struct Contents {
        var dataVersion: Int?
        var badges: [UserID: BadgeUpdate] = [:]
        var memberships: [ChatID: ChatMembership] = [:]
        var readPositions: [ChatID: [UserID: MessageKey]] = [:]
        var presence: [ChatID: [UserID: Timestamp]] = [:]
        var chatsWithPendingReads: Set<ChatID>?
    }

    private let contents = Mutex(Contents())
    private let maximumEntries: Int

    init(maximumEntries: Int = 50_000) { self.maximumEntries = maximumEntries }

    /// Moves what is remembered into a new transaction cache (no copy: the writer is the only user),
    /// (Plain moves, not `swap` inside `withLock`: that combination crashed in release builds here.)
    /// or starts empty if another connection committed since `dataVersion` was last seen. Until
    /// ``commit(_:dataVersion:)`` the memory is empty, so a failed transaction leaves nothing stale.
    func begin(dataVersion: Int) -> SQLiteTransactionCache {
        let remembered = contents.withLock { contents -> Contents in
            defer { contents = Contents() }
            return contents
        }
        let cache = SQLiteTransactionCache()
        if remembered.dataVersion == dataVersion {
            cache.badges = remembered.badges
            cache.memberships = remembered.memberships
            cache.readPositions = remembered.readPositions
            cache.presence = remembered.presence
            cache.chatsWithPendingReads = remembered.chatsWithPendingReads
        }
        return cache
    }

    /// Keeps what a committed transaction knew (its cache holds the committed values).
    func commit(_ cache: SQLiteTransactionCache, dataVersion: Int) {
        var kept = Contents(dataVersion: dataVersion)
        let size = cache.badges.count + cache.memberships.count + cache.readPositions.count + cache.presence.count
            + (cache.chatsWithPendingReads?.count ?? 0)
        if size <= maximumEntries {
            kept.badges = cache.badges
            kept.memberships = cache.memberships
            kept.readPositions = cache.readPositions
            kept.presence = cache.presence
            kept.chatsWithPendingReads = cache.chatsWithPendingReads
        }
        contents.withLock { $0 = kept }
    }
}
