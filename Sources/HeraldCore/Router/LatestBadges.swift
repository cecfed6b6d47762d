import HeraldPluginAPI

/// Each user's latest badge within one commit.
///
/// A badge output carries the user's whole current count, so when several events of one commit change
/// the same user's count, only the last badge tells a client anything. The router queues these after
/// the commit's other outputs, one per user, in the order the users' counts first changed; notifications
/// still carry the count as it was after their own message.
struct LatestBadges {
    private var entries: [(user: UserID, queuedAt: Timestamp)] = []
    private var positions: [UserID: Int] = [:]
    /// Badges that a later badge of the same user in the same commit replaced.
    private(set) var superseded = 0

    /// Creates an empty record with room for `users` users: a large commit's table would otherwise be
    /// hashed anew each time it grows.
    init(reservingCapacity users: Int = 0) {
        entries.reserveCapacity(users)
        positions.reserveCapacity(users)
    }

    /// Notes that `user`'s badge changed in a record received at `queuedAt`.
    mutating func keep(_ user: UserID, queuedAt: Timestamp) {
        if let position = positions[user] {
            entries[position].queuedAt = queuedAt
            superseded += 1
        } else {
            positions[user] = entries.count
            entries.append((user, queuedAt))
        }
    }

    /// One entry per user whose count changed, in the order the counts first changed, with the time
    /// of the last record that changed it; the badge itself is built from the model after the batch.
    var latest: [(user: UserID, queuedAt: Timestamp)] { entries }
}
