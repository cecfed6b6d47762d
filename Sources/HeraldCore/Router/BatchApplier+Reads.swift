import HeraldPluginAPI

extension BatchApplier {
    /// `messages.read`: move the reader's position forward only; unread becomes a recount after it;
    /// a read receipt to each sender whose messages became read; a badge for the reader if it changed.
    /// A read of a message not stored yet is remembered and resolves when the message arrives. A reader
    /// outside the members that `chat.created` declared is refused: a stranger's read would send receipts
    /// to the chat's senders. Before the chat's members are declared, anyone who reads it is let in.
    mutating func applyMessagesRead(_ read: MessagesRead) throws(StateSliceError) -> Effect {
        let membership = model.membership(of: read.chat)
        if membership.declared == true, !membership.declaredMembers.contains(read.reader) {
            return .refused(Rejection(.notAMember, "\(read.reader) is not a member of chat \(read.chat)"))
        }
        let ref = MessageRef(chat: read.chat, id: read.upTo)
        guard let target = model.messageKey(ref) else {
            model.addPendingRead(user: read.reader, message: ref, readAt: read.readAt)
            return Effect(applied: true, outputs: [], badgeUsers: [])
        }
        var receipts: [Output] = []
        guard try advanceReadPosition(of: read.reader, in: read.chat, to: target, readAt: read.readAt, receipts: &receipts) else {
            return .duplicate
        }
        let changed = try settleUnread([read.reader], in: read.chat)
        return Effect(applied: true, outputs: receipts, badgeUsers: Self.inOrder(changed))
    }
}
