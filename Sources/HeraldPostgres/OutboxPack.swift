import HeraldCore
import HeraldModel
import HeraldPluginAPI
import NIOCore

/// Outputs of one sink and one batch stored as one row of `outbox_packs`: each output an entry of the
/// row's `entries`, in order. A row per output cost the server an array element to parse and a row and
/// an index entry to store for every output, half of what it does for a message to a group
/// (docs/store.md#where-the-cost-is); a pack is one value it stores as it comes.
///
/// An entry is the recipient, the kind and the payload, each as a 4-byte big-endian length and its bytes
/// (`herald_outbox_entries` in SQL reads the same). An output's sequence, as the dispatcher sees it, is
/// its pack's `seq` shifted left by ``positionBits``, plus its place in the pack.
struct OutboxPack {
    /// Outputs a pack holds at most: about one read of the dispatcher (256 outputs a read by default),
    /// so a read fetches one or two packs and no pack is read again and again for a few outputs.
    static let maximumOutputs = 256
    /// Bits of an output's sequence that hold its place in its pack.
    static let positionBits = 16

    /// The sink the outputs go to.
    let sink: String
    /// When the first of them was queued.
    let createdAt: Int64
    /// Where the outputs stand in the batch's outbox rows, in order.
    let rows: ArraySlice<Int>

    /// The batch's outbox rows as packs: each sink's rows in their order, ``maximumOutputs`` a pack.
    static func packing(_ rows: [OutboxRow]) -> [OutboxPack] {
        var perSink: [(sink: String, rows: [Int])] = []
        for (index, row) in rows.enumerated() {
            // Sinks are few: a scan beats hashing a name for every row.
            if let at = perSink.firstIndex(where: { $0.sink == row.sink }) {
                perSink[at].rows.append(index)
            } else {
                perSink.append((row.sink, [index]))
            }
        }
        var packs: [OutboxPack] = []
        for (sink, indices) in perSink {
            var start = 0
            while start < indices.count {
                let end = min(start + maximumOutputs, indices.count)
                packs.append(OutboxPack(sink: sink, createdAt: rows[indices[start]].createdAt.milliseconds, rows: indices[start..<end]))
                start = end
            }
        }
        return packs
    }

    /// Writes the pack's entries: each output's document straight into the statement's buffer.
    func writeEntries(of rows: [OutboxRow], into buffer: inout ByteBuffer) {
        for index in self.rows {
            let row = rows[index]
            Self.writeLengthPrefixed(row.recipient.rawValue, into: &buffer)
            Self.writeLengthPrefixed(row.kind.rawValue, into: &buffer)
            let lengthAt = buffer.writerIndex
            buffer.writeInteger(0, as: Int32.self)
            let start = buffer.writerIndex
            buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: OutputWireFormat.encodedSizeBound(row.output)) {
                OutputWireFormat.encode(row.output, into: $0)
            }
            buffer.setInteger(Int32(buffer.writerIndex - start), at: lengthAt)
        }
    }

    private static func writeLengthPrefixed(_ text: String, into buffer: inout ByteBuffer) {
        buffer.writeInteger(Int32(text.utf8.count))
        buffer.writeString(text)
    }

    /// The sequence of the output at `position` in pack `seq`.
    static func sequence(pack seq: Int64, position: Int) -> Int64 { seq << positionBits | Int64(position) }

    /// The pack and the place in it of an output's sequence.
    static func place(of sequence: Int64) -> (pack: Int64, position: Int) {
        (sequence >> positionBits, Int(sequence & (1 << positionBits - 1)))
    }

    /// One entry as read back.
    struct Entry {
        var recipient: String
        var kind: String
        var payload: [UInt8]
    }

    /// The entries of a pack's `entries`, from `first` on (the ones before are skipped, not decoded).
    /// - Throws: ``PostgresStoreError`` when the bytes end inside an entry.
    static func entries(_ bytes: ByteBuffer, from first: Int) throws -> [(position: Int, entry: Entry)] {
        var buffer = bytes
        var entries: [(position: Int, entry: Entry)] = []
        var position = 0
        while buffer.readableBytes > 0 {
            guard let recipientLength = buffer.readInteger(as: Int32.self), recipientLength >= 0,
                  let recipient = buffer.readSlice(length: Int(recipientLength)),
                  let kindLength = buffer.readInteger(as: Int32.self), kindLength >= 0,
                  let kind = buffer.readSlice(length: Int(kindLength)),
                  let payloadLength = buffer.readInteger(as: Int32.self), payloadLength >= 0,
                  let payload = buffer.readSlice(length: Int(payloadLength)) else {
                throw PostgresStoreError.statement("an outbox pack ends inside its entry \(position)")
            }
            if position >= first {
                entries.append((position, Entry(recipient: String(buffer: recipient), kind: String(buffer: kind),
                                                payload: Array(buffer: payload))))
            }
            position += 1
        }
        return entries
    }
}
