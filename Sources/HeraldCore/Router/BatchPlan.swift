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
        // Sized for the batch up front: grown by doubling, the sets rehash every key they hold each time.
        // Here and in `ranges(in:)` the events are read in place by index: bound by `for … in`, each would be
        // copied, every string in it retained and released again.
        keys.messages.reserveCapacity(events.count)
        for index in events.indices {
            keys.chats.insert(events[index].chat)
            switch events[index] {
            case .messageReceived(let message): keys.messages.insert(MessageRef(chat: message.chat, id: message.id))
            case .messagesRead(let read): keys.messages.insert(MessageRef(chat: read.chat, id: read.upTo))
            case .chatCreated, .chatOpened, .chatClosed: break
            }
        }
        return keys
    }

    /// The messages the batch stores, in order: each `message.received` whose message is neither in the
    /// slice nor earlier in the batch, as ``ChatModel`` will store it (the delta's messages, known before
    /// the apply: a store may start writing them meanwhile).
    func newMessages(in slice: StateSlice, receivedAt: Timestamp) -> [NewMessage] {
        var seen: Set<MessageRef> = []
        seen.reserveCapacity(events.count)
        var messages: [NewMessage] = []
        messages.reserveCapacity(events.count)
        for case .messageReceived(let message) in events {
            let ref = MessageRef(chat: message.chat, id: message.id)
            guard slice.messages[ref] == nil, seen.insert(ref).inserted else { continue }
            messages.append(NewMessage(message: message, receivedAt: receivedAt))
        }
        return messages
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
        // Where each named message sits: as stored, else as the batch's first message with its reference.
        var firstKeys: [MessageRef: MessageKey] = [:]
        firstKeys.reserveCapacity(events.count)
        var receivedKeys: [MessageKey] = []
        receivedKeys.reserveCapacity(events.count)
        var createdChats: Set<ChatID> = []
        for index in events.indices {
            switch events[index] {
            case .messageReceived(let message):
                let ref = MessageRef(chat: message.chat, id: message.id)
                receivedKeys.append(slice.messages[ref]?.key
                    ?? Self.value(&firstKeys[ref, default: MessageKey(sentAt: message.sentAt, id: message.id)]))
            case .chatCreated(let created): createdChats.insert(created.chat)
            case .messagesRead, .chatOpened, .chatClosed: break
            }
        }
        func add(_ user: UserID, _ chat: ChatID, _ key: MessageKey?) {
            Self.append(key, to: &candidates[ChatUser(chat: chat, user: user), default: []])
        }
        var received = 0
        for index in events.indices {
            switch events[index] {
            case .messageReceived(let message):
                let key = receivedKeys[received]
                received += 1
                add(message.sender, message.chat, key)
                if let recipients = message.recipients, !recipients.isEmpty {
                    let created = createdChats.contains(message.chat)
                    let inferred = created ? [] : slice.memberships[message.chat]?.inferredMembers ?? []
                    for user in recipients where created || !inferred.contains(user) { add(user, message.chat, nil) }
                }
                if !slice.pendingReads.isEmpty, let waiting = slice.pendingReads[MessageRef(chat: message.chat, id: message.id)] {
                    for user in waiting.keys { add(user, message.chat, key) }
                }
            case .messagesRead(let read):
                let ref = MessageRef(chat: read.chat, id: read.upTo)
                add(read.reader, read.chat, slice.messages[ref]?.key ?? firstKeys[ref])
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

    /// The value stored at a dictionary's entry, through `subscript(_:default:)`'s in-place access, which
    /// stores the default when the key is absent: one lookup where reading, then writing, takes two.
    private static func value<Value>(_ entry: inout Value) -> Value { entry }

    /// Appends `key`, if any, to a list reached the same way (so an absent list is created either way).
    private static func append(_ key: MessageKey?, to entry: inout [MessageKey]) {
        if let key { entry.append(key) }
    }

    /// For each (chat, user), the intervals between the read positions the user can reach: the stored one,
    /// then each of `candidates`' keys above it (in any order, repeats allowed), the last interval open to the
    /// chat's end. A pair with no keys gets the one interval a recount of it needs.
    static func ranges(_ candidates: [ChatUser: [MessageKey]], in slice: StateSlice) -> [StoredRange] {
        var ranges: [StoredRange] = []
        for (pair, keys) in candidates {
            guard let newest = slice.newestMessage[pair.chat] else { continue }
            let stored = slice.readPositions[pair.chat]?[pair.user]
            var above = keys.filter { key in stored.map { key > $0 } ?? true }
            above.sort()
            // Intervals chain from the stored position through each distinct key; none starts at or above
            // the newest stored message, and the keys ascend, so the first that would ends the pair.
            var lower = stored
            for key in above where key != lower {
                guard lower.map({ $0 < newest }) ?? true else { break }
                ranges.append(StoredRange(chat: pair.chat, user: pair.user, after: lower, through: key))
                lower = key
            }
            if lower.map({ $0 < newest }) ?? true {
                ranges.append(StoredRange(chat: pair.chat, user: pair.user, after: lower, through: nil))
            }
        }
        return ranges
    }
}
