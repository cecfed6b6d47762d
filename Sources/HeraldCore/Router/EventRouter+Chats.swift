import HeraldPluginAPI

extension EventRouter {
    /// `chat.created`: declared members replace the inferred ones (several `chat.created` for one chat
    /// add up); everyone who joins or leaves the effective membership is recounted.
    func applyChatCreated(_ created: ChatCreated, in tx: any ChatTransaction) throws -> Effect {
        let before = try tx.members(of: created.chat)
        try tx.addMembers(created.members, to: created.chat, declared: true)
        let after = try tx.members(of: created.chat)
        guard before != after else { return Effect(applied: true, outputs: []) }
        let changed = try settleUnread(before.symmetricDifference(after), in: created.chat, tx: tx)
        return Effect(applied: true, outputs: try badgeOutputs(for: changed, in: tx))
    }

    /// `chat.opened` / `chat.closed`: the user's focus, which expires after the presence TTL.
    func applyFocus(_ focus: ChatFocus, open: Bool, in tx: any ChatTransaction) throws -> Effect {
        let until = open ? clock.now().adding(milliseconds: policy.presenceTTLMilliseconds) : nil
        try tx.setPresence(user: focus.user, chat: focus.chat, until: until)
        return Effect(applied: true, outputs: [])
    }
}
