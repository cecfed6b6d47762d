import Dispatch
import Foundation
@testable import HeraldCore
import HeraldPluginAPI
import HeraldTestKit
import Synchronization
import Testing

/// The group sync of the SQLite store's log, with the `fdatasync` counted (and held, or failed) in its
/// place: a pure test of who waits for which sync. The store's own test below syncs the real log.
@Suite("Syncing the write-ahead log after commits")
struct WALSyncTests {
    @Test func callersThatArriveDuringASyncShareTheNextOneAndNotTheRunningOne() async throws {
        let directory = try TemporaryDirectory()
        let store = directory.path("store.sqlite")
        #expect(FileManager.default.createFile(atPath: store + "-wal", contents: Data([1])))
        let firstHeld = DispatchSemaphore(value: 0)
        let syncs = Atomic(0)
        let sync = WALSync(storePath: store) { _ in
            if syncs.add(1, ordering: .relaxed).newValue == 1 { firstHeld.wait() }
            return 0
        }
        let returned = Atomic(0)
        func call() { Thread { try? sync.sync(); returned.add(1, ordering: .relaxed) }.start() }

        call()
        try await eventually("the first sync to run") { syncs.load(ordering: .relaxed) == 1 }
        // These commits finished while the first sync ran, which may have begun before them.
        for _ in 0..<3 { call() }
        try await eventually("three more callers to wait") { sync.callers == 4 }
        #expect(returned.load(ordering: .relaxed) == 0)
        firstHeld.signal()
        try await eventually("every caller to return") { returned.load(ordering: .relaxed) == 4 }
        #expect(syncs.load(ordering: .relaxed) == 2)
        #expect(sync.completed == 2)
    }

    @Test func aFailedSyncFailsEverySyncAfterIt() throws {
        let directory = try TemporaryDirectory()
        let store = directory.path("store.sqlite")
        #expect(FileManager.default.createFile(atPath: store + "-wal", contents: Data([1])))
        let syncs = Atomic(0)
        let sync = WALSync(storePath: store) { _ in
            syncs.add(1, ordering: .relaxed)
            errno = EIO
            return -1
        }
        #expect(throws: SQLiteStoreError.self) { try sync.sync() }
        // The pages the kernel could not write may be gone: no later sync may report them durable.
        let error = #expect(throws: SQLiteStoreError.self) { try sync.sync() }
        #expect(error?.description.contains("Input/output error") == true)
        #expect(syncs.load(ordering: .relaxed) == 1)
    }

    @Test("with durability full each commit syncs the real log once the writer is free; with normal none does",
          arguments: SQLiteChatStore.Durability.allCases)
    func theStoreSyncsItsLogAfterEachCommit(durability: SQLiteChatStore.Durability) throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteChatStore(path: directory.path("store.sqlite"), durability: durability)
        let synced = durability == .full ? 1 : 0
        try store.write { _ in }
        #expect(store.logSyncs == synced)
        let (_, durable) = try store.writeDeferringDurability { _ in }
        #expect(store.logSyncs == synced)
        try durable.wait()
        #expect(store.logSyncs == 2 * synced)
        #expect(try store.effectiveDurability() == durability)
    }
}
