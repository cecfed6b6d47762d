@testable import HeraldCore
import HeraldPluginAPI
import Testing

/// The router's apply as a pure transform: a slice built by hand in, a delta out, no store.
@Suite("Slice to delta (pure)")
struct SliceTransformTests {
    static let now = Timestamp(milliseconds: 10_000)

    static func apply(_ events: [ChatEvent], to slice: StateSlice) throws -> (delta: StoreDelta, outputs: [Output]) {
        var applier = BatchApplier(slice: slice, policy: RouterPolicy(), now: now)
        var outputs: [Output] = []
        for event in events { outputs += try applier.apply(event).outputs }
        return (applier.model.delta(), outputs)
    }

    @Test func aMessageIntoAKnownChatBecomesAnInsertACounterDeltaAndTheSendersPosition() throws {
        var slice = StateSlice()
        slice.memberships["c1"] = ChatMembership(declared: false, declaredMembers: [], inferredMembers: ["alice", "bob"])
        slice.newestMessage["c1"] = MessageKey(sentAt: Timestamp(milliseconds: 1000), id: "m1")
        slice.readPositions["c1"] = ["alice": MessageKey(sentAt: Timestamp(milliseconds: 1000), id: "m1")]
        slice.unread = ["alice": [:], "bob": ["c1": 1, "c9": 4]]
        let m2 = MessageReceived(chat: "c1", id: "m2", sender: "alice", recipients: ["bob"], body: "hi", sentAt: Timestamp(milliseconds: 2000))

        let (delta, outputs) = try Self.apply([.messageReceived(m2)], to: slice)

        #expect(delta.messages == [NewMessage(message: m2, receivedAt: Self.now)])
        #expect(delta.unreadDeltas == [UnreadDelta(user: "bob", chat: "c1", delta: 1)])
        #expect(delta.readPositions == [ReadPosition(user: "alice", chat: "c1", key: MessageKey(sentAt: m2.sentAt, id: "m2"))])
        #expect(delta.members.isEmpty && delta.chats.isEmpty)
        #expect(outputs == [.notification(InAppNotification(recipient: "bob", chat: "c1", messageID: "m2", sender: "alice",
                                                            preview: "hi", badgeTotal: 6))])
    }

    @Test func aDuplicateChangesNothing() throws {
        var slice = StateSlice()
        slice.messages[MessageRef(chat: "c1", id: "m1")] = StoredMessage(key: MessageKey(sentAt: Timestamp(milliseconds: 1000), id: "m1"),
                                                                        sender: "alice")
        slice.unread = ["alice": [:], "bob": [:]]
        let (delta, outputs) = try Self.apply([message("c1", "m1", from: "alice", to: ["bob"])], to: slice)
        #expect(delta.isEmpty)
        #expect(outputs.isEmpty)
    }

    @Test func aReadUsesTheStoredRangeForItsReceiptsAndRecount() throws {
        let m1 = MessageKey(sentAt: Timestamp(milliseconds: 1000), id: "m1")
        let m3 = MessageKey(sentAt: Timestamp(milliseconds: 3000), id: "m3")
        var slice = StateSlice()
        slice.messages[MessageRef(chat: "c1", id: "m3")] = StoredMessage(key: m3, sender: "carol")
        slice.newestMessage["c1"] = MessageKey(sentAt: Timestamp(milliseconds: 4000), id: "m4")
        slice.memberships["c1"] = ChatMembership(declared: false, declaredMembers: [], inferredMembers: ["alice", "bob", "carol"])
        slice.readPositions["c1"] = ["bob": m1]
        slice.unread = ["bob": ["c1": 3]]
        slice.ranges = [
            StoredRange(chat: "c1", user: "bob", after: m1, through: m3): StoredRangeSummary(count: 2, senders: ["alice", "carol"]),
            StoredRange(chat: "c1", user: "bob", after: m3, through: nil): StoredRangeSummary(count: 1, senders: ["alice"]),
        ]
        let (delta, outputs) = try Self.apply([read("bob", "c1", upTo: "m3")], to: slice)
        #expect(outputs.compactMap(\.receipt).map(\.recipient) == ["alice", "carol"])
        #expect(delta.unreadDeltas == [UnreadDelta(user: "bob", chat: "c1", delta: -2)])
        #expect(delta.readPositions == [ReadPosition(user: "bob", chat: "c1", key: m3)])
    }

    @Test func aSliceWithoutTheRangesARecountNeedsIsADefectNotAWrongCount() throws {
        var slice = StateSlice()
        slice.messages[MessageRef(chat: "c1", id: "m3")] = StoredMessage(key: MessageKey(sentAt: Timestamp(milliseconds: 3000), id: "m3"),
                                                                        sender: "carol")
        slice.newestMessage["c1"] = MessageKey(sentAt: Timestamp(milliseconds: 3000), id: "m3")
        slice.memberships["c1"] = ChatMembership(declared: false, declaredMembers: [], inferredMembers: ["bob", "carol"])
        slice.unread = ["bob": ["c1": 1]]
        #expect(throws: StateSliceError.self) { try Self.apply([read("bob", "c1", upTo: "m3")], to: slice) }
    }

    @Test func thePlanAsksForNoRangesWhenTheBatchOnlyAppendsToItsChats() {
        // A stream of new messages: every position the batch reaches is above the newest stored message.
        var slice = StateSlice()
        slice.newestMessage["c1"] = MessageKey(sentAt: Timestamp(milliseconds: 1000), id: "m1")
        slice.memberships["c1"] = ChatMembership(declared: false, declaredMembers: [], inferredMembers: ["alice", "bob"])
        slice.readPositions["c1"] = ["alice": MessageKey(sentAt: Timestamp(milliseconds: 1000), id: "m1")]
        let events = (2...50).map { message("c1", MessageID("m\($0)"), from: "alice", to: ["bob"], at: Int64($0) * 1000) }
        #expect(BatchPlan(events: events).ranges(in: slice).isEmpty)
    }
}
