import HeraldPluginAPI

/// What a batch needs loaded before it can be applied in memory, in three steps that each take a
/// number of queries that does not grow with the batch: the keys its events name (``keys``), then,
/// knowing their memberships and read positions, the users whose badges it may change
/// (``users(in:)``) and the stored-message ranges its recounts and receipts may need (``ranges(in:)``).
struct BatchPlan {
    let events: [ChatEvent]

    init(events: [ChatEvent]) { self.events = events }

    /// The chats and messages the events name.
    var keys: SliceKeys {
        var keys = SliceKeys()
        for event in events {
            keys.chats.insert(event.chat)
            switch event {
            case .messageReceived(let message): keys.messages.insert(MessageRef(chat: message.chat, id: message.id))
            case .messagesRead(let read): keys.messages.insert(MessageRef(chat: read.chat, id: read.upTo))
            case .chatCreated, .chatOpened, .chatClosed: break
            }
        }
        return keys
    }

    /// Everyone whose unread counters the batch may read or change: members of its chats, participants,
    /// readers and whoever waits on a read.
    func users(in slice: StateSlice) -> Set<UserID> {
        var users: Set<UserID> = []
        for membership in slice.memberships.values {
            users.formUnion(membership.declaredMembers)
            users.formUnion(membership.inferredMembers)
        }
        for readers in slice.pendingReads.values { users.formUnion(readers.keys) }
        for event in events {
            switch event {
            case .messageReceived(let message):
                users.insert(message.sender)
                users.formUnion(message.recipients ?? [])
            case .messagesRead(let read): users.insert(read.reader)
            case .chatCreated(let created): users.formUnion(created.members)
            case .chatOpened, .chatClosed: break
            }
        }
        return users
    }

    /// The stored-message ranges to summarise: for every (chat, user) the batch may recount or send
    /// receipts for, the intervals between the read positions the user can reach in the batch (the
    /// stored one, their own new messages, the messages they read), from the stored position up.
    /// Intervals above the chat's newest stored message hold nothing and are left out.
    func ranges(in slice: StateSlice) -> [StoredRange] {
        var candidates: [ChatUser: [MessageKey]] = [:]
        var firstKeys: [MessageRef: MessageKey] = [:]
        var createdChats: Set<ChatID> = []
        for event in events {
            if case .messageReceived(let message) = event {
                let ref = MessageRef(chat: message.chat, id: message.id)
                if slice.messages[ref] == nil, firstKeys[ref] == nil {
                    firstKeys[ref] = MessageKey(sentAt: message.sentAt, id: message.id)
                }
            }
            if case .chatCreated(let created) = event { createdChats.insert(created.chat) }
        }
        func key(of ref: MessageRef) -> MessageKey? { slice.messages[ref]?.key ?? firstKeys[ref] }
        func add(_ user: UserID, _ chat: ChatID, _ key: MessageKey?) {
            let pair = ChatUser(chat: chat, user: user)
            if let key { candidates[pair, default: []].append(key) } else if candidates[pair] == nil { candidates[pair] = [] }
        }
        for event in events {
            switch event {
            case .messageReceived(let message):
                let ref = MessageRef(chat: message.chat, id: message.id)
                add(message.sender, message.chat, key(of: ref))
                let inferred = slice.memberships[message.chat]?.inferredMembers ?? []
                for user in message.recipients ?? [] where !inferred.contains(user) || createdChats.contains(message.chat) {
                    add(user, message.chat, nil)
                }
                for user in slice.pendingReads[ref]?.keys ?? [:].keys { add(user, message.chat, key(of: ref)) }
            case .messagesRead(let read):
                add(read.reader, read.chat, key(of: MessageRef(chat: read.chat, id: read.upTo)))
            case .chatCreated(let created):
                let membership = slice.memberships[created.chat]
                for user in created.members + Array(membership?.declaredMembers ?? []) + Array(membership?.inferredMembers ?? []) {
                    add(user, created.chat, nil)
                }
            case .chatOpened, .chatClosed: break
            }
        }
        return Self.ranges(candidates, in: slice)
    }

    /// For each (chat, user), the intervals between the read positions the user can reach: the stored one,
    /// then each of `candidates`' keys above it (in any order, repeats allowed), the last interval open to the
    /// chat's end. A pair with no keys gets the one interval a recount of it needs.
    static func ranges(_ candidates: [ChatUser: [MessageKey]], in slice: StateSlice) -> [StoredRange] {
        var ranges: [StoredRange] = []
        for (pair, keys) in candidates {
            guard let newest = slice.newestMessage[pair.chat] else { continue }
            let stored = slice.readPositions[pair.chat]?[pair.user]
            var bounds: [MessageKey?] = [stored]
            for key in keys.filter({ key in stored.map { key > $0 } ?? true }).sorted() where bounds.last != key {
                bounds.append(key)
            }
            for (index, lower) in bounds.enumerated() {
                guard lower.map({ $0 < newest }) ?? true else { break }
                let upper = index + 1 < bounds.count ? bounds[index + 1] : nil
                ranges.append(StoredRange(chat: pair.chat, user: pair.user, after: lower, through: upper))
            }
        }
        return ranges
    }
}
