import Foundation
import HeraldCore
import HeraldTestKit
import Testing

@Suite("SQLite chat store")
struct SQLiteChatStoreTests {
    @Test("the configured durability is the one the writer runs with", arguments: SQLiteChatStore.Durability.allCases)
    func durabilityTakesEffect(durability: SQLiteChatStore.Durability) throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteChatStore(path: directory.path("store.sqlite"), durability: durability)
        #expect(try store.effectiveDurability() == durability)
        // A reopened store applies it again (the pool's WAL setup must not override it).
        let reopened = try SQLiteChatStore(path: directory.path("store.sqlite"), durability: durability)
        #expect(try reopened.effectiveDurability() == durability)
    }
}
