import HeraldPluginAPI

extension BatchApplier {
    /// `message.received`: store idempotently; the sender has read the chat up to their own message
    /// (their position moves forward to it, and the senders it covers get receipts); unread +1 for
    /// every other member for whom the message is after their read position; a live message to members
    /// looking at the chat, a notification to the others; a badge to everyone whose count changed.
    mutating func applyMessageReceived(_ message: MessageReceived) throws(StateSliceError) -> Effect {
        guard model.insert(message, receivedAt: now) else { return .duplicate }
        let chat = message.chat
        let key = MessageKey(sentAt: message.sentAt, id: message.id)

        // Participants join the inferred membership; anyone new to the effective set is recounted.
        let membership = model.membership(of: chat)
        var joining: [UserID] = []
        if !membership.inferredMembers.contains(message.sender) { joining.append(message.sender) }
        for user in message.recipients ?? [] where !membership.inferredMembers.contains(user) && !joining.contains(user) {
            joining.append(user)
        }
        if !joining.isEmpty || membership.declared == nil { model.addMembers(joining, to: chat, declared: false) }
        // The users to recount, each once (a handful: an array, see `settleUnread`).
        var recount: [UserID] = membership.declared == true ? [] : joining

        // Room for a receipt to each other member and a notification to each (past 64 outputs, growing
        // costs less than what a large group's reservation would take).
        let members = model.sortedMembers(of: chat)
        var outputs: [Output] = []
        outputs.reserveCapacity(min(2 * members.count, 64))

        // Reads that arrived before this message now resolve; the sender has read up to it.
        for pending in model.takePendingReads(MessageRef(chat: chat, id: message.id)) {
            _ = try advanceReadPosition(of: pending.user, in: chat, to: key, readAt: pending.readAt, receipts: &outputs)
            if !recount.contains(pending.user) { recount.append(pending.user) }
        }
        var settled: [UserID] = []
        if try advanceReadPosition(of: message.sender, in: chat, to: key, readAt: message.sentAt, receipts: &outputs),
           !recount.contains(message.sender) {
            // Nothing is unread after one's own newest message (and nothing to a non-member): no recount.
            if model.isNewest(key, in: chat) {
                if try model.setUnread(user: message.sender, chat: chat, to: 0) { settled.append(message.sender) }
            } else {
                recount.append(message.sender)
            }
        }
        settled += try settleUnread(recount, in: chat)

        // Everyone else: +1 when the message is after their position (a late message may already be read);
        // a live message to those looking at the chat, a notification with their new total to the others.
        let positions = model.readPositions(chat: chat)
        let focus = model.presence(chat: chat)
        let preview = preview(of: message.body)
        var incremented: [UserID] = []
        incremented.reserveCapacity(members.count)
        for user in members where user != message.sender {
            guard positions[user].map({ key > $0 }) ?? true else { continue }
            let total: Int
            if recount.contains(user) {
                total = model.unreadTotal(of: user)
            } else {
                total = try model.incrementUnread(user: user, chat: chat)
                incremented.append(user)
            }
            if let until = focus[user], until > now {
                outputs.append(.liveMessage(LiveMessage(recipient: user, message: message)))
            } else {
                outputs.append(.notification(InAppNotification(
                    recipient: user, chat: chat, messageID: message.id, sender: message.sender,
                    preview: preview, badgeTotal: total)))
            }
        }
        return Effect(applied: true, outputs: outputs, badgeUsers: Self.inOrder(settled, merging: incremented))
    }

    /// The start of a body, at most ``RouterPolicy/previewLength`` characters including the ellipsis.
    func preview(of body: String) -> String {
        // A character takes at least one UTF-8 byte: a body with few bytes needs no count of characters.
        guard body.utf8.count > policy.previewLength, body.count > policy.previewLength else { return body }
        return String(body.prefix(max(0, policy.previewLength - 1))) + "…"
    }
}
