import HeraldPluginAPI

extension BatchApplier {
    /// `chat.created`: declared members replace the inferred ones (several `chat.created` for one chat
    /// add up); everyone who joins or leaves the effective membership is recounted.
    mutating func applyChatCreated(_ created: ChatCreated) throws(StateSliceError) -> Effect {
        let before = model.membership(of: created.chat).effective
        model.addMembers(created.members, to: created.chat, declared: true)
        let after = model.membership(of: created.chat).effective
        guard before != after else { return Effect(applied: true, outputs: [], badgeUsers: []) }
        let changed = try settleUnread(before.symmetricDifference(after), in: created.chat)
        return Effect(applied: true, outputs: [], badgeUsers: Self.inOrder(changed))
    }

    /// `chat.opened` / `chat.closed`: the user's focus, which expires after the presence TTL.
    mutating func applyFocus(_ focus: ChatFocus, open: Bool) -> Effect {
        let until = open ? now.adding(milliseconds: policy.presenceTTLMilliseconds) : nil
        model.setPresence(user: focus.user, chat: focus.chat, until: until)
        return Effect(applied: true, outputs: [], badgeUsers: [])
    }
}
