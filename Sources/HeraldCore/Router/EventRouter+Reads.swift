import HeraldPluginAPI

extension EventRouter {
    /// `messages.read`: move the reader's position forward only; unread becomes a recount after it;
    /// a read receipt to each sender whose messages became read; a badge for the reader if it changed.
    /// A read of a message not stored yet is remembered and resolves when the message arrives.
    func applyMessagesRead(_ read: MessagesRead, in tx: any ChatTransaction) throws -> Effect {
        guard let target = try tx.messageKey(chat: read.chat, id: read.upTo) else {
            try tx.addPendingRead(user: read.reader, chat: read.chat, upTo: read.upTo, readAt: read.readAt)
            return Effect(applied: true, outputs: [])
        }
        let receipts = try advanceReadPosition(of: read.reader, in: read.chat, to: target, readAt: read.readAt, in: tx)
        guard let receipts else { return .duplicate }
        let changed = try settleUnread([read.reader], in: read.chat, tx: tx)
        return Effect(applied: true, outputs: receipts + (try badgeOutputs(for: changed, in: tx)))
    }

    /// Moves a read position forward to `target` if it is ahead.
    /// - Returns: read receipts for the senders whose messages became read, or `nil` if the
    ///   position was already at or past `target`.
    func advanceReadPosition(of reader: UserID, in chat: ChatID, to target: MessageKey, readAt: Timestamp,
                             in tx: any ChatTransaction) throws -> [Output]? {
        let old = try tx.readPosition(user: reader, chat: chat)
        if let old, target <= old { return nil }
        try tx.setReadPosition(user: reader, chat: chat, to: target)
        let senders = try tx.senders(chat: chat, after: old, through: target, excluding: reader)
        return senders.sorted().map {
            .readReceipt(ReadReceipt(recipient: $0, chat: chat, upTo: target.id, reader: reader, readAt: readAt))
        }
    }
}
