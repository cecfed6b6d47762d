import HeraldPluginAPI

/// The chat model of one batch, in memory: the ``StateSlice`` as loaded, and the state as the batch's
/// events change it. The router's apply functions read and change only this; ``delta()`` is the
/// difference to write back. No I/O happens here.
struct ChatModel {
    let slice: StateSlice
    private let storedRanges: [ChatUser: StoredRanges]
    /// Messages this batch stored, per chat.
    private var batchMessages: [ChatID: BatchMessages] = [:]
    private var batchKeys: [MessageRef: MessageKey] = [:]
    private(set) var newMessages: [NewMessage] = []

    private(set) var memberships: [ChatID: ChatMembership]
    /// Each chat's effective members in order, kept until its membership changes.
    private var orderedMembers: [ChatID: [UserID]] = [:]
    private(set) var currentPositions: [ChatID: [UserID: MessageKey]]
    private(set) var currentPendingReads: [MessageRef: [UserID: Timestamp]]
    private(set) var currentPresence: [ChatID: [UserID: Timestamp]]
    /// Each loaded user's counters, with their total (a change to a counter changes both with one lookup
    /// of the user).
    private(set) var currentUnread: [UserID: UserCounters]

    /// Creates the model of a batch that stores at most `messages` messages (room is reserved for them).
    init(slice: StateSlice, messages: Int = 0) {
        self.slice = slice
        batchKeys.reserveCapacity(messages)
        newMessages.reserveCapacity(messages)
        storedRanges = StoredRanges.group(slice.ranges)
        memberships = slice.memberships
        currentPositions = slice.readPositions
        currentPendingReads = slice.pendingReads
        currentPresence = slice.presence
        currentUnread = slice.unread.mapValues { UserCounters(chats: $0, total: $0.values.reduce(0, +)) }
    }

    // MARK: Messages

    /// The place of a stored message (stored before the batch or by it).
    func messageKey(_ ref: MessageRef) -> MessageKey? { slice.messages[ref]?.key ?? batchKeys[ref] }

    /// Stores a message unless it is stored. Returns `false` for a duplicate.
    mutating func insert(_ message: MessageReceived, receivedAt: Timestamp) -> Bool {
        let ref = MessageRef(chat: message.chat, id: message.id)
        guard slice.messages[ref] == nil else { return false }
        let key = MessageKey(sentAt: message.sentAt, id: message.id)
        // One lookup for the common case, a new message; a duplicate within the batch puts the first key back.
        if let first = batchKeys.updateValue(key, forKey: ref) {
            batchKeys[ref] = first
            return false
        }
        batchMessages[message.chat, default: BatchMessages()].insert(key, sender: message.sender)
        newMessages.append(NewMessage(message: message, receivedAt: receivedAt))
        return true
    }

    /// Messages after `position` (`nil`: all) not sent by `user`: the definition of unread.
    func countUnread(user: UserID, chat: ChatID, after position: MessageKey?) throws(StateSliceError) -> Int {
        let stored = try ranges(chat: chat, user: user).count(after: position, newest: slice.newestMessage[chat])
        return stored + (batchMessages[chat]?.count(after: position, excluding: user) ?? 0)
    }

    /// Whether no message of `chat`, stored or stored by the batch, is after `key`.
    func isNewest(_ key: MessageKey, in chat: ChatID) -> Bool {
        if let stored = slice.newestMessage[chat], stored > key { return false }
        return batchMessages[chat]?.last.map { $0 <= key } ?? true
    }

    /// Senders other than `reader` of the messages in `(after, through]`.
    func senders(chat: ChatID, after: MessageKey?, through: MessageKey, excluding reader: UserID) throws(StateSliceError) -> DistinctUsers {
        var senders = DistinctUsers()
        try ranges(chat: chat, user: reader).addSenders(after: after, through: through, newest: slice.newestMessage[chat], to: &senders)
        batchMessages[chat]?.addSenders(after: after, through: through, excluding: reader, to: &senders)
        return senders
    }

    /// A pair without ranges has none above its positions; asking below the chat's newest message
    /// then throws (``StoredRanges``).
    private func ranges(chat: ChatID, user: UserID) -> StoredRanges {
        storedRanges[ChatUser(chat: chat, user: user)] ?? StoredRanges()
    }

    // MARK: Membership

    /// A chat's membership (unknown chats have none).
    func membership(of chat: ChatID) -> ChatMembership {
        memberships[chat] ?? ChatMembership(declared: nil, declaredMembers: [], inferredMembers: [])
    }

    /// Adds members; `declared` for `chat.created`, inferred for message participants.
    mutating func addMembers(_ users: some Sequence<UserID>, to chat: ChatID, declared: Bool) {
        var membership = membership(of: chat)
        if declared {
            membership.declared = true
            membership.declaredMembers.formUnion(users)
        } else {
            membership.declared = membership.declared ?? false
            membership.inferredMembers.formUnion(users)
        }
        memberships[chat] = membership
        orderedMembers[chat] = nil
    }

    /// A chat's effective members, sorted.
    mutating func sortedMembers(of chat: ChatID) -> [UserID] {
        if let ordered = orderedMembers[chat] { return ordered }
        let ordered = membership(of: chat).effective.sorted()
        orderedMembers[chat] = ordered
        return ordered
    }

    // MARK: Read positions

    /// The newest message `user` has read in `chat`.
    func readPosition(user: UserID, chat: ChatID) -> MessageKey? { currentPositions[chat]?[user] }

    /// Every read position in a chat.
    func readPositions(chat: ChatID) -> [UserID: MessageKey] { currentPositions[chat] ?? [:] }

    /// Moves a read position forward to `key` if it is ahead.
    /// - Returns: whether it moved, and the position before.
    mutating func advanceReadPosition(user: UserID, chat: ChatID, to key: MessageKey) -> (moved: Bool, old: MessageKey?) {
        Self.advance(&currentPositions[chat, default: [:]], of: user, to: key)
    }

    private static func advance(_ positions: inout [UserID: MessageKey], of user: UserID,
                                to key: MessageKey) -> (moved: Bool, old: MessageKey?) {
        let old = positions[user]
        if let old, key <= old { return (false, old) }
        positions[user] = key
        return (true, old)
    }

    /// Remembers a read of a message that is not stored yet (the latest read time wins).
    mutating func addPendingRead(user: UserID, message: MessageRef, readAt: Timestamp) {
        let known = currentPendingReads[message]?[user]
        currentPendingReads[message, default: [:]][user] = max(known ?? readAt, readAt)
    }

    /// Removes and returns the reads that waited for `message`, by reader.
    mutating func takePendingReads(_ message: MessageRef) -> [(user: UserID, readAt: Timestamp)] {
        guard let waiting = currentPendingReads.removeValue(forKey: message) else { return [] }
        return waiting.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    // MARK: Unread and badges

    /// The unread count of (user, chat).
    func unread(user: UserID, chat: ChatID) throws(StateSliceError) -> Int {
        guard let counters = currentUnread[user] else { throw StateSliceError("unread counters of \(user) not loaded") }
        return counters.chats[chat] ?? 0
    }

    /// Sets the unread count of (user, chat).
    /// - Returns: whether the count changed.
    @discardableResult
    mutating func setUnread(user: UserID, chat: ChatID, to count: Int) throws(StateSliceError) -> Bool {
        let index = try counters(of: user)
        let previous = count == 0
            ? currentUnread.values[index].chats.removeValue(forKey: chat)
            : currentUnread.values[index].chats.updateValue(count, forKey: chat)
        guard (previous ?? 0) != count else { return false }
        currentUnread.values[index].total += count - (previous ?? 0)
        return true
    }

    /// Adds one to the unread count of (user, chat).
    /// - Returns: the user's unread total after it.
    @discardableResult
    mutating func incrementUnread(user: UserID, chat: ChatID) throws(StateSliceError) -> Int {
        let index = try counters(of: user)
        currentUnread.values[index].chats[chat, default: 0] += 1
        currentUnread.values[index].total += 1
        return currentUnread.values[index].total
    }

    /// Where `user`'s counters are (each is changed in place, with one lookup of the user).
    private func counters(of user: UserID) throws(StateSliceError) -> [UserID: UserCounters].Index {
        guard let index = currentUnread.index(forKey: user) else { throw StateSliceError("unread counters of \(user) not loaded") }
        return index
    }

    /// A user's unread total over all chats.
    func unreadTotal(of user: UserID) -> Int { currentUnread[user]?.total ?? 0 }

    /// A user's badge as the model stands.
    func badge(for user: UserID) -> BadgeUpdate {
        guard let counters = currentUnread[user] else { return BadgeUpdate(recipient: user, unread: 0, chats: [:]) }
        var chats: [ChatID: Int] = [:]
        for (chat, count) in counters.chats where count != 0 { chats[chat] = count }
        return BadgeUpdate(recipient: user, unread: counters.total, chats: chats)
    }

    // MARK: Presence

    /// Every user's focus expiry in a chat.
    func presence(chat: ChatID) -> [UserID: Timestamp] { currentPresence[chat] ?? [:] }

    /// Sets or clears (`nil`) a user's focus on a chat.
    mutating func setPresence(user: UserID, chat: ChatID, until: Timestamp?) {
        currentPresence[chat, default: [:]][user] = until
    }
}

/// One user's unread counters in a batch's model, and their sum.
struct UserCounters {
    /// The count of each chat with unread messages (a chat at 0 may be absent).
    var chats: [ChatID: Int]
    /// The sum of `chats`.
    var total: Int
}
