public import HeraldPluginAPI

extension EventRouter {
    /// Recounts the unread counters of `pairs` from the stored messages and read positions and sets
    /// every one that differs, in one transaction, queueing the new badge of each user whose counter
    /// changed: the repair for counters that drifted (a restored backup, an edit by hand).
    ///
    /// The recount runs inside the write transaction on the slice the router loads for a batch, so a
    /// gateway committing at the same time never sees a half-repaired chat and is never undone by it.
    /// Repeating it changes nothing.
    /// - Returns: the counters that changed (what they held and what they hold now), by user and chat.
    public func recountUnread(_ pairs: [(user: UserID, chat: ChatID)]) throws(IngestError) -> [CounterDrift] {
        guard !pairs.isEmpty else { return [] }
        var usersByChat: [ChatID: Set<UserID>] = [:]
        for pair in pairs { usersByChat[pair.chat, default: []].insert(pair.user) }
        let repairs: [CounterDrift]
        do {
            repairs = try store.write { tx in try applyRecount(usersByChat, in: tx) }
        } catch {
            metrics.commitFailures.increment()
            throw IngestError("recount of \(pairs.count) unread counters failed: \(error)")
        }
        if !repairs.isEmpty { signal.notify() }
        return repairs
    }

    private func applyRecount(_ usersByChat: [ChatID: Set<UserID>], in tx: any ChatTransaction) throws -> [CounterDrift] {
        var keys = SliceKeys()
        keys.chats = Set(usersByChat.keys)
        var slice = try tx.loadSlice(keys)
        var pairs: [ChatUser: [MessageKey]] = [:]
        for (chat, users) in usersByChat { for user in users { pairs[ChatUser(chat: chat, user: user)] = [] } }
        try tx.loadCounters(users: usersByChat.values.reduce(into: Set<UserID>()) { $0.formUnion($1) },
                            ranges: BatchPlan.ranges(pairs, in: slice), into: &slice)

        var applier = BatchApplier(slice: slice, policy: policy, now: clock.now())
        var repairs: [CounterDrift] = []
        for chat in usersByChat.keys.sorted() {
            let users = usersByChat[chat] ?? []
            var before: [UserID: Int] = [:]
            for user in users { before[user] = try applier.model.unread(user: user, chat: chat) }
            for user in try applier.settleUnread(users, in: chat) {
                repairs.append(CounterDrift(user: user, chat: chat, stored: before[user] ?? 0,
                                             recounted: try applier.model.unread(user: user, chat: chat)))
            }
        }
        repairs.sort { ($0.user, $0.chat) < ($1.user, $1.chat) }
        var delta = applier.model.delta()
        let now = clock.now()
        for user in Set(repairs.map(\.user)).sorted() {
            enqueue(.badge(applier.model.badge(for: user)), at: now, into: &delta.outbox)
        }
        try tx.write(delta)
        return repairs
    }
}
