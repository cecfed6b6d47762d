import HeraldPluginAPI

extension EventRouter {
    /// `message.received`: store idempotently; unread +1 for every member but the sender for whom the
    /// message is after their read position; a live message to members looking at the chat, a
    /// notification to the others; a badge to everyone whose count changed.
    func applyMessageReceived(_ message: MessageReceived, in tx: any ChatTransaction) throws -> Effect {
        guard try tx.insertMessage(message, receivedAt: clock.now()) else { return .duplicate }
        let chat = message.chat
        let key = MessageKey(sentAt: message.sentAt, id: message.id)

        // Participants join the inferred membership; anyone new to the effective set is recounted.
        let membership = try tx.membership(of: chat)
        let participants = [message.sender] + (message.recipients ?? [])
        let joining = participants.filter { !membership.inferredMembers.contains($0) }
        if !joining.isEmpty || membership.declared == nil {
            try tx.addMembers(Array(Set(joining)), to: chat, declared: false)
        }
        // Declared members do not change here; otherwise the joining participants are the new ones.
        let members = membership.declared == true ? membership.declaredMembers
            : (joining.isEmpty ? membership.inferredMembers : membership.inferredMembers.union(joining))
        var recount: Set<UserID> = membership.declared == true ? [] : Set(joining)

        // Reads that arrived before this message now resolve.
        var outputs: [Output] = []
        for pending in try tx.takePendingReads(chat: chat, upTo: message.id) {
            outputs += try advanceReadPosition(of: pending.user, in: chat, to: key, readAt: pending.readAt, in: tx) ?? []
            recount.insert(pending.user)
        }
        var changed = try settleUnread(recount, in: chat, tx: tx)

        // Everyone else: +1 when the message is after their position (a late message may already be read).
        let positions = try tx.readPositions(chat: chat)
        var unreadFor: [UserID] = []
        for user in members.sorted() where user != message.sender {
            guard positions[user].map({ key > $0 }) ?? true else { continue }
            unreadFor.append(user)
            if !recount.contains(user) {
                try tx.incrementUnread(user: user, chat: chat)
                changed.insert(user)
            }
        }

        let now = clock.now()
        let focus = unreadFor.isEmpty ? [:] : try tx.presence(chat: chat)
        var badges = BadgeCache()
        for user in unreadFor {
            if let until = focus[user], until > now {
                outputs.append(.liveMessage(LiveMessage(recipient: user, message: message)))
            } else {
                outputs.append(.notification(InAppNotification(
                    recipient: user, chat: chat, messageID: message.id, sender: message.sender,
                    preview: preview(of: message.body), badgeTotal: try badges.badge(for: user, in: tx).unread)))
            }
        }
        outputs += try badgeOutputs(for: changed, in: tx, cache: &badges)
        return Effect(applied: true, outputs: outputs)
    }

    /// The start of a body, at most ``RouterPolicy/previewLength`` characters including the ellipsis.
    func preview(of body: String) -> String {
        // A character takes at least one UTF-8 byte: a body with few bytes needs no count of characters.
        guard body.utf8.count > policy.previewLength, body.count > policy.previewLength else { return body }
        return String(body.prefix(max(0, policy.previewLength - 1))) + "…"
    }

    /// Recounts unread for `users` in `chat` from stored messages (0 for non-members).
    /// - Returns: the users whose count changed.
    func settleUnread(_ users: Set<UserID>, in chat: ChatID, tx: any ChatTransaction) throws -> Set<UserID> {
        guard !users.isEmpty else { return [] }
        let members = try tx.members(of: chat)
        var changed: Set<UserID> = []
        for user in users {
            let target = members.contains(user)
                ? try tx.countUnread(user: user, chat: chat, after: try tx.readPosition(user: user, chat: chat)) : 0
            if target != (try tx.unread(user: user, chat: chat)) {
                try tx.setUnread(user: user, chat: chat, count: target)
                changed.insert(user)
            }
        }
        return changed
    }

    /// A badge output per user, in a stable order.
    func badgeOutputs(for users: Set<UserID>, in tx: any ChatTransaction, cache: inout BadgeCache) throws -> [Output] {
        try users.sorted().map { .badge(try cache.badge(for: $0, in: tx)) }
    }

    /// A badge output per user, in a stable order.
    func badgeOutputs(for users: Set<UserID>, in tx: any ChatTransaction) throws -> [Output] {
        var cache = BadgeCache()
        return try badgeOutputs(for: users, in: tx, cache: &cache)
    }
}

/// Badges read once per event: after the event's changes, a user's badge no longer moves.
struct BadgeCache {
    private var badges: [UserID: BadgeUpdate] = [:]

    mutating func badge(for user: UserID, in tx: any ChatTransaction) throws -> BadgeUpdate {
        if let known = badges[user] { return known }
        let badge = try tx.badge(for: user)
        badges[user] = badge
        return badge
    }
}
