import HeraldPluginAPI

/// Users gathered one at a time, each kept once: the senders a read receipt covers.
///
/// Those are a handful in almost every chat, so they are kept in a short array, checked by a walk that
/// compares bytes, without hashing a user or allocating a set for each receipt. Past ``arrayLimit`` users
/// a set beside the array answers the check, so a read over a large group's messages stays linear.
struct DistinctUsers {
    /// The users, in the order they were first inserted.
    private(set) var users: [UserID] = []
    /// The same users, once there are more than ``arrayLimit``.
    private var lookup: Set<UserID>?

    /// Users kept in the array alone at most.
    static let arrayLimit = 16

    /// Creates an empty collection.
    init() {}

    /// Adds `user` unless it is there.
    mutating func insert(_ user: UserID) {
        if let inserted = lookup?.insert(user).inserted {
            if inserted { users.append(user) }
            return
        }
        guard !users.contains(user) else { return }
        users.append(user)
        if users.count > Self.arrayLimit { lookup = Set(users) }
    }

    /// Adds each of `others` that is not there.
    mutating func formUnion(_ others: some Sequence<UserID>) {
        for user in others { insert(user) }
    }

    /// The users in order (as `ORDER BY` sorts them); one or none need no sorted copy.
    func sorted() -> [UserID] { users.count < 2 ? users : users.sorted() }
}
