import HeraldPluginAPI

extension ChatModel {
    /// What the batch changed, against the slice as loaded, in a stable order.
    func delta() -> StoreDelta {
        var delta = StoreDelta()
        delta.messages = newMessages
        membershipDelta(into: &delta)
        for (chat, positions) in currentPositions {
            let loaded = slice.readPositions[chat] ?? [:]
            for (user, key) in positions where loaded[user] != key {
                delta.readPositions.append(ReadPosition(user: user, chat: chat, key: key))
            }
        }
        for (message, readers) in currentPendingReads {
            let loaded = slice.pendingReads[message] ?? [:]
            for (user, readAt) in readers where loaded[user] != readAt {
                delta.pendingReadsAdded.append(PendingRead(message: message, user: user, readAt: readAt))
            }
        }
        delta.pendingReadsResolved = slice.pendingReads.keys.filter { currentPendingReads[$0] == nil }
        for (user, counters) in currentUnread {
            let loaded = slice.unread[user] ?? [:]
            for (chat, count) in counters.chats {
                let change = count - (loaded[chat] ?? 0)
                if change != 0 { delta.unreadDeltas.append(UnreadDelta(user: user, chat: chat, delta: change)) }
            }
            for (chat, count) in loaded where counters.chats[chat] == nil && count != 0 {
                delta.unreadDeltas.append(UnreadDelta(user: user, chat: chat, delta: -count))
            }
        }
        for chat in Set(currentPresence.keys).union(slice.presence.keys) {
            let now = currentPresence[chat] ?? [:]
            let loaded = slice.presence[chat] ?? [:]
            for user in Set(now.keys).union(loaded.keys) where now[user] != loaded[user] {
                delta.presence.append(PresenceChange(user: user, chat: chat, until: now[user]))
            }
        }
        delta.readPositions.sort { KeyOrder.ascending($0.chat.byteOrder(comparedTo: $1.chat), $0.user.byteOrder(comparedTo: $1.user)) }
        delta.unreadDeltas.sort { KeyOrder.ascending($0.user.byteOrder(comparedTo: $1.user), $0.chat.byteOrder(comparedTo: $1.chat)) }
        delta.presence.sort { KeyOrder.ascending($0.chat.byteOrder(comparedTo: $1.chat), $0.user.byteOrder(comparedTo: $1.user)) }
        delta.pendingReadsAdded.sort {
            KeyOrder.ascending($0.message.chat.byteOrder(comparedTo: $1.message.chat), $0.message.id.byteOrder(comparedTo: $1.message.id),
                               $0.user.byteOrder(comparedTo: $1.user))
        }
        delta.pendingReadsResolved.sort { KeyOrder.ascending($0.chat.byteOrder(comparedTo: $1.chat), $0.id.byteOrder(comparedTo: $1.id)) }
        return delta
    }

    private func membershipDelta(into delta: inout StoreDelta) {
        // Members are only ever added, so a chat whose flag and counts are as loaded has not changed.
        let changed = memberships.lazy.filter { chat, membership in
            guard let loaded = slice.memberships[chat] else { return true }
            return loaded.declared != membership.declared || loaded.declaredMembers.count != membership.declaredMembers.count
                || loaded.inferredMembers.count != membership.inferredMembers.count
        }
        for (chat, membership) in changed.sorted(by: { $0.key < $1.key }) {
            let loaded = slice.memberships[chat]
            if loaded?.declared != membership.declared, let declared = membership.declared {
                delta.chats[chat] = declared
            }
            let declaredNew = membership.declaredMembers.subtracting(loaded?.declaredMembers ?? [])
            let inferredNew = membership.inferredMembers.subtracting(loaded?.inferredMembers ?? [])
            for user in declaredNew.union(inferredNew).sorted() {
                delta.members.append(MemberFlags(chat: chat, user: user, declared: declaredNew.contains(user),
                                                 inferred: inferredNew.contains(user)))
            }
        }
    }
}
