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

    @Test("the writer's page cache is the configured size")
    func cacheSizeTakesEffect() throws {
        let directory = try TemporaryDirectory()
        #expect(try SQLiteChatStore(path: directory.path("default.sqlite")).effectiveCacheKiB() == SQLiteChatStore.defaultCacheMiB * 1024)
        #expect(try SQLiteChatStore(path: directory.path("small.sqlite"), cacheMiB: 3).effectiveCacheKiB() == 3 * 1024)
    }

    @Test("under continuous commits, checkpoints let the write-ahead log start over instead of growing")
    func logStartsOverUnderLoad() async throws {
        let harness = try await RouterHarness()
        let stop = Atomic(false)
        let (commits, continuation) = AsyncStream.makeStream(of: Int.self, bufferingPolicy: .bufferingNewest(1))
        let writerDone = DispatchSemaphore(value: 0)
        Thread {
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
        }.start()
        var reports: [WALCheckpointReport] = []
        let walPath = harness.sqlite.path + "-wal"
        let restartsBefore = try Self.walCheckpointSequence(walPath)
        var lastCheckpointAt = 0
        let connection = try harness.sqlite.openCheckpointConnection()
        for await count in commits where count >= lastCheckpointAt + 5 {
            // A few commits land between checkpoints; the writer goes on during each one.
            reports.append(try await harness.sqlite.checkpointWAL(using: connection, truncateAbovePages: .max))
            lastCheckpointAt = count
            if reports.count == 30 { break }
        }
        stop.store(true, ordering: .relaxed)
        await withCheckedContinuation { continuation in
            Thread { writerDone.wait(); continuation.resume() }.start()
        }
        // SQLite counts the log's restarts in its header. A checkpoint that only races the writer from
        // another connection lets the log start over rarely or never while commits keep coming.
        let restarts = try Self.walCheckpointSequence(walPath) &- restartsBefore
        #expect(restarts >= 20, "frames per checkpoint: \(reports.map(\.logFrames))")
        #expect(reports.allSatisfy { !$0.truncated })
    }

    @Test("a log past the limit is truncated to nothing")
    func logPastTheLimitIsTruncated() async throws {
        let harness = try await RouterHarness()
        for index in 0..<20 {
            try harness.apply(.messageReceived(MessageReceived(
                chat: "c1", id: MessageID("m\(index)"), sender: "alice", recipients: ["bob"], body: "hello",
                sentAt: Timestamp(milliseconds: Int64(index)))))
        }
        let walPath = harness.sqlite.path + "-wal"
        #expect(try FileManager.default.attributesOfItem(atPath: walPath)[.size] as? Int ?? 0 > 0)
        let report = try await harness.sqlite.checkpointWAL(using: harness.sqlite.openCheckpointConnection(), truncateAbovePages: 1)
        #expect(report.truncated && report.logFrames > 1)
        #expect(try FileManager.default.attributesOfItem(atPath: walPath)[.size] as? Int == 0)
        // The store goes on writing after the truncation.
        try harness.apply(.messageReceived(MessageReceived(
            chat: "c1", id: "m-after", sender: "alice", recipients: ["bob"], body: "hello", sentAt: Timestamp(milliseconds: 99))))
        #expect(try harness.sqlite.statistics().messages == 21)
    }

    /// `herald run` and a `herald dlq list` (or a test polling the store) may open a new store at the same
    /// moment: both must succeed, and the store must be migrated once.
    @Test("several connections opening the same new store at once all succeed")
    func concurrentOpensOfANewStore() throws {
        let directory = try TemporaryDirectory()
        for round in 0..<20 {
            let path = directory.path("store-\(round).sqlite")
            let failures = Mutex<[String]>([])
            let start = DispatchSemaphore(value: 0)
            let group = DispatchGroup()
            for _ in 0..<4 {
                group.enter()
                Thread {
                    start.wait()
                    do { _ = try SQLiteChatStore(path: path, durability: .normal) } catch {
                        failures.withLock { $0.append("\(error)") }
                    }
                    group.leave()
                }.start()
            }
            for _ in 0..<4 { start.signal() }
            group.wait()
            #expect(failures.withLock { $0 }.isEmpty, "round \(round)")
            #expect(try SQLiteChatStore(path: path, readOnly: true).statistics().messages == 0)
        }
    }

    /// The checkpoint sequence number in a WAL file's header (big-endian, bytes 12–15), which SQLite
    /// increments each time the log starts over.
    static func walCheckpointSequence(_ path: String) throws -> UInt32 {
        let handle = try #require(FileHandle(forReadingAtPath: path))
        defer { try? handle.close() }
        let header = try #require(try handle.read(upToCount: 16))
        try #require(header.count == 16)
        return header[12..<16].reduce(0) { $0 << 8 | UInt32($1) }
    }
}
