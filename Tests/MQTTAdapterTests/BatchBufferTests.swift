import HeraldModel
import HeraldPluginAPI
@testable import MQTTAdapter
import Testing

/// A burst's array is reserved for the size of the burst before it: full bursts of a backlog never grow
/// their arrays, and a trickle of single messages does not reserve room for a full burst each time.
@Suite("MQTT source burst buffer")
struct BatchBufferTests {
    private let limit = 6000

    private func record(_ index: Int) -> SourceRecord {
        SourceRecord(provenance: Provenance(adapter: "broker", origin: "chats/c\(index)/messages", rawSize: 2,
                                            receivedAt: Timestamp(milliseconds: Int64(index))),
                     outcome: .rejected(Rejection(.malformedJSON, "test")), raw: Array("{}".utf8))
    }

    private func read(_ count: Int, into buffer: BatchBuffer) {
        for index in 0..<count { buffer.records.append(record(index)) }
    }

    @Test("after a small burst the next is reserved small; after a full one, in full")
    func reservationFollowsThePreviousBurst() {
        let buffer = BatchBuffer(capacity: limit)
        #expect(buffer.records.capacity >= limit)

        read(1, into: buffer)
        #expect(buffer.take().count == 1)
        #expect(buffer.records.isEmpty)
        #expect(buffer.records.capacity >= BatchBuffer.minimumReservation)
        #expect(buffer.records.capacity < limit)

        read(limit, into: buffer)
        let full = buffer.take()
        #expect(full.count == limit)
        #expect(full.map(\.provenance.origin) == (0..<limit).map { "chats/c\($0)/messages" })
        #expect(buffer.records.capacity >= limit)

        read(40, into: buffer)
        #expect(buffer.take().count == 40)
        #expect(buffer.records.capacity >= 40)
        #expect(buffer.records.capacity < limit)
    }

    @Test("the reservation is at least the minimum and at most the burst limit")
    func reservationBounds() {
        #expect(BatchBuffer.reservation(after: 0, limit: limit) == BatchBuffer.minimumReservation)
        #expect(BatchBuffer.reservation(after: 700, limit: limit) == 700)
        #expect(BatchBuffer.reservation(after: limit, limit: limit) == limit)
        #expect(BatchBuffer.reservation(after: 3, limit: 4) == 4)
    }
}
