import Dispatch
import Foundation
import HeraldCore
import HeraldPluginAPI
import HeraldTestKit
import Synchronization
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

    @Test("under continuous commits, checkpoints let the write-ahead log start over instead of growing")
    func logStartsOverUnderLoad() async throws {
        let harness = try RouterHarness()
        let stop = Atomic(false)
        let (commits, continuation) = AsyncStream.makeStream(of: Int.self, bufferingPolicy: .bufferingNewest(1))
        let writerDone = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            var index = 0
            while !stop.load(ordering: .relaxed) {
                index += 1
                _ = try? harness.apply(.messageReceived(MessageReceived(
                    chat: ChatID("c\(index % 50)"), id: MessageID("m\(index)"), sender: "alice", recipients: ["bob"],
                    body: String(repeating: "x", count: 200), sentAt: Timestamp(milliseconds: Int64(index)))))
                continuation.yield(index)
            }
            continuation.finish()
            writerDone.signal()
        }
        var reports: [WALCheckpointReport] = []
        var lastCheckpointAt = 0
        for await count in commits where count >= lastCheckpointAt + 5 {
            // A few commits land between checkpoints; the writer goes on during each one.
            reports.append(try await harness.store.checkpointWAL(truncateAbovePages: .max))
            lastCheckpointAt = count
            if reports.count == 30 { break }
        }
        stop.store(true, ordering: .relaxed)
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { writerDone.wait(); continuation.resume() }
        }
        // The log starts over when a checkpoint leaves nothing uncopied between two commits: the frame
        // count then drops. A checkpoint that only races the writer from another connection never sees
        // that moment while commits keep coming, and the count only grows.
        let restarts = zip(reports, reports.dropFirst()).filter { $1.logFrames < $0.logFrames }.count
        #expect(restarts >= 10, "frames per checkpoint: \(reports.map(\.logFrames))")
        #expect(reports.allSatisfy { !$0.truncated })
    }
}
