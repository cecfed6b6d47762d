import HeraldCore
import HeraldPluginAPI
import HeraldTestKit
import PropertyBased
import Testing

/// Any permutation of the same set of message, read and chat events — with duplicates, and with reads
/// that arrive before their message — leaves the same store state and the same badges, and every
/// badge equals a recount from stored messages. Presence events are mixed in too: they may only
/// choose between live messages and notifications. Reads from someone a `chat.created` of their chat
/// leaves out are dropped from the input: whether they are refused depends on which comes first.
@Suite("Order independence (property-based)")
struct OrderIndependenceTests {
    static let chats: [ChatID] = ["c0", "c1", "c2"]
    static let users: [UserID] = ["u0", "u1", "u2", "u3"]

    /// Decodes one generated integer into an event. Everything about a message derives from
    /// (chat, id), so duplicates are true redeliveries.
    static func event(_ code: Int) -> ChatEvent {
        let chat = chats[(code / 7) % chats.count]
        let slot = (code / 31) % 8
        let user = users[(code / 11) % users.count]
        switch code % 7 {
        case 0, 1, 2:
            let sender = users[(slot + chat.rawValue.count) % users.count]
            let recipient = users[(slot + 1) % users.count]
            return message(chat, MessageID("m\(slot)"), from: sender, to: [recipient], body: "b\(slot)", at: Int64((slot * 3) % 5) * 1000)
        case 3, 4:
            return read(user, chat, upTo: MessageID("m\(slot)"))
        case 5:
            let members = users.enumerated().filter { (code >> ($0.offset + 3)) & 1 == 1 }.map(\.element)
            return .chatCreated(ChatCreated(chat: chat, members: members.isEmpty ? [user] : members))
        default:
            return code % 2 == 0 ? .chatOpened(ChatFocus(user: user, chat: chat)) : .chatClosed(ChatFocus(user: user, chat: chat))
        }
    }

    /// Applies `events` one commit at a time (as separate MQTT bursts would) to a fresh store.
    static func state(after events: [ChatEvent], on backend: StoreBackend) async throws -> (snapshot: [String], harness: RouterHarness) {
        let harness = try await RouterHarness(backend)
        let snapshot = try await offCooperativePool {
            var lastBadge: [UserID: BadgeUpdate] = [:]
            for chunk in stride(from: 0, to: events.count, by: 3) {
                _ = try harness.router.commit(events[chunk..<min(chunk + 3, events.count)].map(harness.record))
                for badge in try harness.drain().compactMap(\.badgeUpdate) { lastBadge[badge.recipient] = badge }
            }
            // Badge outputs are built from the batch model; the last one each user got must equal the store.
            for (user, badge) in lastBadge {
                #expect(badge == (try harness.badge(user)), "last badge output of \(user)")
            }
            return try harness.store.modelSnapshot()
        }
        return (snapshot, harness)
    }

    @Test(arguments: StoreBackend.allCases) func anyPermutationLeavesTheSameStateAndBadgesEqualARecount(_ backend: StoreBackend) async throws {
        await propertyCheck(count: backend.propertyRuns, input: Gen.int(in: 0...100_000).array(of: 1...40), Gen.int(in: 0...Int.max)) { codes, seed in
            do {
                let events = withoutOrderDependentReads(codes.map(Self.event))
                var generator = SplitMix64(seed: UInt64(seed))
                let shuffled = events.shuffled(using: &generator)
                let (expected, first) = try await Self.state(after: events, on: backend)
                let (actual, second) = try await Self.state(after: shuffled, on: backend)
                #expect(expected == actual)
                for harness in [first, second] {
                    for row in try harness.store.unreadAgainstRecount() {
                        #expect(row.stored == row.recounted, "badge of \(row.user) in \(row.chat)")
                    }
                    for user in Self.users {
                        #expect(try first.badge(user).chats == second.badge(user).chats)
                    }
                }
            } catch {
                Issue.record(error)
            }
        }
    }
}
