import HeraldPluginAPI

extension OutboxDispatcher {
    /// Rebuilds the badges in `batch` from the store's counters as they are now, when several instances
    /// may write to the store (``ChatStore/outboxFollowsCommitOrder`` is false).
    ///
    /// A badge is built in its commit from the counters that commit could see. With one writer that is
    /// every earlier commit, so the last badge queued for a user is the user's count. With several, two
    /// commits that change one user's counters in different chats at the same time each miss the other's
    /// change, and whichever badge goes last would stay wrong until the user's next change. Every commit
    /// that changes a user's counters queues a badge for that user, and a badge delivered after the commit
    /// that queued it is read afterwards here, so the last one delivered counts every change.
    /// One query a batch, for the batch's badge recipients.
    static func refreshingBadges(_ batch: [OutboxEnvelope], from store: any ChatStore) throws -> [OutboxEnvelope] {
        var users: [UserID] = []
        var seen: Set<UserID> = []
        for envelope in batch where envelope.kind == .badge && seen.insert(envelope.recipient).inserted {
            users.append(envelope.recipient)
        }
        guard !users.isEmpty else { return batch }
        let current = try store.badges(for: users)
        return batch.map { envelope in
            guard envelope.kind == .badge else { return envelope }
            var refreshed = envelope
            let badge = current[envelope.recipient] ?? BadgeUpdate(recipient: envelope.recipient, unread: 0, chats: [:])
            refreshed.payload = OutputWireFormat.encode(.badge(badge))
            return refreshed
        }
    }
}
