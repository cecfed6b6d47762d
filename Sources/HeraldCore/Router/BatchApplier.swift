import HeraldPluginAPI

/// Applies a batch's events to its ``StateSlice`` in memory, one at a time in order: a pure
/// transform with no I/O. The exhaustive `switch` in ``apply(_:)`` is the product's spine: the
/// model changes first, then outputs are built from the model as it is after the change.
struct BatchApplier {
    var model: ChatModel
    let policy: RouterPolicy
    /// The batch's time: messages are stamped with it, and focus expires relative to it.
    let now: Timestamp

    /// Creates the applier of a batch with at most `messages` new messages (see ``ChatModel/init(slice:messages:)``).
    init(slice: StateSlice, policy: RouterPolicy, now: Timestamp, messages: Int = 0) {
        self.model = ChatModel(slice: slice, messages: messages)
        self.policy = policy
        self.now = now
    }

    /// Applies one event. Returns whether it changed the model, the outputs it produced and whose
    /// badge changed.
    mutating func apply(_ event: ChatEvent) throws(StateSliceError) -> Effect {
        switch event {
        case .messageReceived(let message): try applyMessageReceived(message)
        case .messagesRead(let read): try applyMessagesRead(read)
        case .chatCreated(let created): try applyChatCreated(created)
        case .chatOpened(let focus): applyFocus(focus, open: true)
        case .chatClosed(let focus): applyFocus(focus, open: false)
        }
    }

    /// Recounts unread for `users` (each named once) in `chat` (0 for non-members).
    /// - Returns: the users whose count changed, in the order given. An event names a handful of users,
    ///   so the lists it passes are arrays: a set would hash each user and allocate for every message.
    mutating func settleUnread(_ users: some Collection<UserID>, in chat: ChatID) throws(StateSliceError) -> [UserID] {
        guard !users.isEmpty else { return [] }
        let members = model.membership(of: chat).effective
        var changed: [UserID] = []
        for user in users {
            let target = members.contains(user)
                ? try model.countUnread(user: user, chat: chat, after: model.readPosition(user: user, chat: chat)) : 0
            if try model.setUnread(user: user, chat: chat, to: target) { changed.append(user) }
        }
        return changed
    }

    /// Moves a read position forward to `target` if it is ahead, and appends to `receipts` a read receipt
    /// for each sender whose messages became read, in the senders' order.
    /// - Returns: whether the position moved (`false` if it was already at or past `target`).
    mutating func advanceReadPosition(of reader: UserID, in chat: ChatID, to target: MessageKey, readAt: Timestamp,
                                      receipts: inout [Output]) throws(StateSliceError) -> Bool {
        let (moved, old) = model.advanceReadPosition(user: reader, chat: chat, to: target)
        guard moved else { return false }
        let senders = try model.senders(chat: chat, after: old, through: target, excluding: reader)
        func receipt(to sender: UserID) -> Output {
            .readReceipt(ReadReceipt(recipient: sender, chat: chat, upTo: target.id, reader: reader, readAt: readAt))
        }
        for sender in senders.sorted() { receipts.append(receipt(to: sender)) }
        return true
    }

    /// Users in order, for ``Effect/badgeUsers``; one or none need no sorted copy.
    static func inOrder(_ users: [UserID]) -> [UserID] { users.count < 2 ? users : users.sorted() }

    /// `sorted` and `others` (a few users, none of them in `sorted`) in order, for ``Effect/badgeUsers``:
    /// each of `others` goes in at its place, where sorting the whole list again would compare every user.
    static func inOrder(_ others: [UserID], merging sorted: [UserID]) -> [UserID] {
        guard !others.isEmpty else { return sorted }
        guard !sorted.isEmpty else { return inOrder(others) }
        var users = sorted
        for user in others { users.insert(user, at: users.firstIndex { user < $0 } ?? users.endIndex) }
        return users
    }
}

/// What applying one event did.
struct Effect {
    /// `false` for a redelivery or an event that changed nothing it could.
    var applied: Bool
    /// Outputs built from the model after the change, badges aside.
    var outputs: [Output]
    /// Users whose badge changed, in a stable order (their badges are queued once per commit).
    var badgeUsers: [UserID]
    /// Why the event was refused instead of applied (it is dead-lettered), or `nil`.
    var rejection: Rejection? = nil

    static let duplicate = Effect(applied: false, outputs: [], badgeUsers: [])

    /// An event refused for `rejection`: it changes nothing and goes to the dead-letter queue.
    static func refused(_ rejection: Rejection) -> Effect {
        Effect(applied: false, outputs: [], badgeUsers: [], rejection: rejection)
    }
}
