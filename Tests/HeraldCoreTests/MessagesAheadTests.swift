@testable import HeraldCore
import HeraldPluginAPI
import HeraldTestKit
import PropertyBased
import Testing

/// A store that writes a batch's new messages while the batch is applied (PostgreSQL) takes them from the
/// batch plan before the apply; the apply must then store exactly those, in the same order, or the
/// store's write has to make up the difference.
@Suite("Messages stored ahead of the apply (pure)")
struct MessagesAheadTests {
    static let now = Timestamp(milliseconds: 10_000)

    @Test func thePlanListsTheMessagesTheApplyStores() async {
        await propertyCheck(count: 200, input: Gen.int(in: 0...100_000).array(of: 1...60), Gen.int(in: 0...Int.max)) { codes, seed in
            do {
                let events = codes.map(OrderIndependenceTests.event)
                var random = SplitMix64(seed: UInt64(truncatingIfNeeded: seed))
                let plan = BatchPlan(events: events)
                var slice = StateSlice()
                // Some of the named messages are stored already: the apply skips them, and the plan must too.
                for ref in plan.keys.messages where random.next() % 3 == 0 {
                    slice.messages[ref] = StoredMessage(key: MessageKey(sentAt: Timestamp(milliseconds: 0), id: ref.id), sender: "someone")
                }
                slice.unread = Dictionary(uniqueKeysWithValues: plan.users(in: slice).map { ($0, [:]) })
                var applier = BatchApplier(slice: slice, policy: RouterPolicy(), now: Self.now)
                for event in events { _ = try applier.apply(event) }
                let stored = applier.model.delta().messages
                #expect(plan.newMessages(in: slice, receivedAt: Self.now) == stored)
            } catch {
                Issue.record(error)
            }
        }
    }

    @Test func whatDidNotGoAheadIsWrittenWithTheDelta() {
        func new(_ chat: ChatID, _ id: MessageID) -> NewMessage {
            NewMessage(message: MessageReceived(chat: chat, id: id, sender: "alice", recipients: nil, body: "b", sentAt: Timestamp(milliseconds: 1)),
                       receivedAt: Self.now)
        }
        let (m1, m2, m3) = (new("c1", "m1"), new("c1", "m2"), new("c2", "m1"))
        #expect(NewMessage.remaining([m1, m2, m3], after: [m1, m2, m3]).isEmpty)
        #expect(NewMessage.remaining([m1, m2, m3], after: [m2]) == [m1, m3])
        #expect(NewMessage.remaining([m1], after: []) == [m1])
    }
}
