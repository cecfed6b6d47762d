import HeraldPluginAPI

/// Each user's latest badge within one commit.
///
/// A badge output carries the user's whole current count, so when several events of one commit change
/// the same user's count, only the last badge tells a client anything. The router queues these after
/// the commit's other outputs, one per user, in the order the users' counts first changed; notifications
/// still carry the count as it was after their own message.
struct LatestBadges {
    private var entries: [(update: BadgeUpdate, queuedAt: Timestamp)] = []
    private var positions: [UserID: Int] = [:]
    /// Badges that a later badge of the same user in the same commit replaced.
    private(set) var superseded = 0

    /// Keeps `update` as its user's latest badge, produced by a record received at `queuedAt`.
    mutating func keep(_ update: BadgeUpdate, queuedAt: Timestamp) {
        if let position = positions[update.recipient] {
            entries[position] = (update, queuedAt)
            superseded += 1
        } else {
            positions[update.recipient] = entries.count
            entries.append((update, queuedAt))
        }
    }

    /// One badge per user whose count changed, in the order the counts first changed.
    var latest: [(update: BadgeUpdate, queuedAt: Timestamp)] { entries }
}
