import Foundation
@testable import herald
import HeraldTestKit
import Testing

/// `herald run` limits glibc's malloc arenas to two unless `MALLOC_ARENA_MAX` is set (counted in the
/// running process's memory map after it has carried messages on all its threads), and fixes the mmap
/// threshold on a SQLite store unless the environment sets it.
@Suite("glibc's allocator in herald run")
struct MallocTuningTests {
    @Test func theMmapThresholdIsFixedOnASQLiteStoreAndEitherPartIsLeftToTheEnvironmentThatSetsIt() {
        #expect(MallocTuning.settings(for: [:], sqliteStore: true) == .init(arenaLimit: 2, mmapThreshold: 256 * 1024))
        #expect(MallocTuning.settings(for: [:], sqliteStore: false) == .init(arenaLimit: 2, mmapThreshold: nil))
        #expect(MallocTuning.settings(for: ["MALLOC_MMAP_THRESHOLD_": "131072"], sqliteStore: true) == .init(arenaLimit: 2, mmapThreshold: nil))
        #expect(MallocTuning.settings(for: ["MALLOC_ARENA_MAX": "8"], sqliteStore: true) == .init(arenaLimit: nil, mmapThreshold: 256 * 1024))
        let tunables = "glibc.malloc.tcache_count=0:glibc.malloc.mmap_threshold=4096:glibc.malloc.arena_max=4"
        #expect(MallocTuning.settings(for: ["GLIBC_TUNABLES": tunables], sqliteStore: true) == .init(arenaLimit: nil, mmapThreshold: nil))
        #expect(MallocTuning.settings(for: ["GLIBC_TUNABLES": "glibc.malloc.tcache_count=0"], sqliteStore: true)
                == .init(arenaLimit: 2, mmapThreshold: 256 * 1024))
    }

    /// The threshold as glibc applies it, in this process: freeing a 1 MiB block would raise glibc's own
    /// threshold to 1 MiB, and 300 KiB blocks would then come from the heap; with the threshold fixed they
    /// get mappings of their own once the heap's free chunks that fit are used up (the other tests running
    /// in this process may have left some). glibc marks such a chunk in the size word before the block
    /// (`IS_MMAPPED`, 0x2); the kernel may merge the mapping with its neighbours, so `/proc/self/maps` cannot
    /// tell.
    @Test func withTheThresholdFixedALargeBlockIsMappedOnItsOwnAfterALargerOneWasFreed() throws {
        MallocTuning.applyMmapThreshold(of: MallocTuning.settings(for: [:], sqliteStore: true))
        free(malloc(1 << 20))
        let blocks = (0..<64).compactMap { _ in malloc(300 * 1024) }
        defer { blocks.forEach { free($0) } }
        let mapped = blocks.filter { $0.load(fromByteOffset: -MemoryLayout<UInt>.size, as: UInt.self) & 0x2 != 0 }
        #expect(blocks.count == 64)
        #expect(!mapped.isEmpty, "no 300 KiB block of 64 is mapped on its own")
    }

    @Test func theGatewayRunsOnTwoArenasUnlessTheEnvironmentSaysOtherwise() async throws {
        let fixture = try await GatewayFixture()
        #expect(try await arenas(of: fixture, environment: [:]) <= 1, "the main arena and at most one other")
        // Where the environment asks for more, glibc gives each allocating thread its own: the count above
        // would show them.
        #expect(try await arenas(of: fixture, environment: ["MALLOC_ARENA_MAX": "8"]) >= 2)
    }

    /// Arenas besides the main one in a gateway that has stored and notified some messages.
    private func arenas(of fixture: GatewayFixture, environment: [String: String]) async throws -> Int {
        let herald = try HeraldProcess(configPath: fixture.configPath, logPath: fixture.directory.path("herald-\(UUID().uuidString.prefix(6)).log"),
                                       environment: environment)
        try await herald.waitUntilConnected()
        let observer = try await TestMQTTClient(port: fixture.broker.port, subscriptions: ["users/+/notifications"])
        let client = try await TestMQTTClient(port: fixture.broker.port)
        let batch = UUID().uuidString.prefix(6)
        for index in 0..<200 {
            try client.publish("chats/c\(index % 10)/messages", messageJSON(id: "\(batch)-\(index)", from: "alice", to: ["bob", "carol"]))
        }
        try await observer.waitForMessages("400 notifications") { $0.count >= 400 }
        let count = try Self.mmappedArenas(pid: herald.child.pid)
        herald.child.signal(SIGTERM)
        #expect(try await herald.child.waitForExit() == 0)
        for peer in [observer, client] { try await peer.close() }
        return count
    }

    /// glibc maps every arena but the main one as a 64 MiB region aligned to 64 MiB (`HEAP_MAX_SIZE`),
    /// anonymous, its used part read-write and the rest reserved: count those runs in `/proc/PID/maps`.
    static func mmappedArenas(pid: pid_t) throws -> Int {
        let size: UInt64 = 64 << 20
        let regions: [(start: UInt64, end: UInt64, anonymous: Bool)] = try String(contentsOfFile: "/proc/\(pid)/maps", encoding: .utf8)
            .split(separator: "\n").compactMap { line in
                let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                let bounds = fields.first?.split(separator: "-").compactMap { UInt64($0, radix: 16) } ?? []
                guard bounds.count == 2 else { return nil }
                return (bounds[0], bounds[1], fields.count < 6)
            }
        var count = 0
        for (index, region) in regions.enumerated() where region.anonymous && region.start % size == 0 {
            var end = region.end
            var next = index + 1
            while end - region.start < size, next < regions.count, regions[next].anonymous, regions[next].start == end {
                end = regions[next].end
                next += 1
            }
            if end - region.start == size { count += 1 }
        }
        return count
    }
}
