import HeraldPluginAPI

/// Outputs of one sink and one batch stored as one row of `outbox_packs`, on either store: each output an
/// entry of the row's `entries`, in order. A row per output cost each store a row and an index entry to
/// write for every output, and a sink a row to read and delete for each (docs/store.md#where-the-cost-is);
/// a pack is one value the store keeps as it comes.
///
/// An entry is the recipient, the kind and the payload, each as a 4-byte big-endian length and its bytes
/// (PostgreSQL's `herald_outbox_entries` reads the same). An output's sequence, as the dispatcher sees it, is its pack's `seq` shifted left by ``positionBits``,
/// plus its place in the pack.
public struct OutboxPack: Sendable {
    /// Outputs a pack holds at most: about one read of the dispatcher (256 outputs a read by default),
    /// so a read fetches one or two packs and no pack is read again and again for a few outputs.
    public static let maximumOutputs = 256
    /// Bits of an output's sequence that hold its place in its pack.
    public static let positionBits = 16

    /// The sink the outputs go to.
    public let sink: String
    /// When the first of them was queued.
    public let createdAt: Int64
    /// Where the outputs stand in the batch's outbox rows, in order.
    public let rows: ArraySlice<Int>

    /// The batch's outbox rows as packs: each sink's rows in their order, ``maximumOutputs`` a pack.
    public static func packing(_ rows: [OutboxRow]) -> [OutboxPack] {
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

    /// The most bytes the pack's entries take (each output's document at its longest).
    public func entriesSizeBound(of rows: [OutboxRow]) -> Int {
        // The rows' fields are read in place: a row bound to a name is copied, every string in it retained.
        self.rows.reduce(0) { total, index in
            total + 12 + rows[index].recipient.rawValue.utf8.count + rows[index].kind.rawValue.utf8.count
                + OutputWireFormat.encodedSizeBound(rows[index].output)
        }
    }

    /// Writes the pack's entries into `buffer`, which holds at least ``entriesSizeBound(of:)`` bytes, each
    /// output's document straight in place.
    /// - Returns: the bytes written.
    public func writeEntries(of rows: [OutboxRow], into buffer: UnsafeMutableRawBufferPointer) -> Int {
        var at = 0
        func writeLength(_ length: Int, at offset: Int) {
            buffer.storeBytes(of: UInt32(length).bigEndian, toByteOffset: offset, as: UInt32.self)
        }
        // The offset is passed in and out: a nested function that changed `at` itself would box it, and every
        // access to it would be checked at run time.
        func write(_ text: String, at offset: inout Int) {
            var text = text
            offset = text.withUTF8 { [offset] bytes in
                writeLength(bytes.count, at: offset)
                UnsafeMutableRawBufferPointer(rebasing: buffer[(offset + 4)...]).copyMemory(from: UnsafeRawBufferPointer(bytes))
                return offset + 4 + bytes.count
            }
        }
        // In place, as in `entriesSizeBound(of:)`.
        for index in self.rows {
            write(rows[index].recipient.rawValue, at: &at)
            write(rows[index].kind.rawValue, at: &at)
            let written = OutputWireFormat.encode(rows[index].output, into: UnsafeMutableRawBufferPointer(rebasing: buffer[(at + 4)...]))
            writeLength(written, at: at)
            at += 4 + written
        }
        return at
    }

    /// One entry from its parts, as a pack of one stores it (an output moved from a table with a row per
    /// output, or written by hand).
    public static func entry(recipient: String, kind: String, payload: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = []
        for part in [Array(recipient.utf8), Array(kind.utf8), payload] {
            withUnsafeBytes(of: UInt32(part.count).bigEndian) { bytes.append(contentsOf: $0) }
            bytes.append(contentsOf: part)
        }
        return bytes
    }

    /// The sequence of the output at `position` in pack `seq`.
    public static func sequence(pack seq: Int64, position: Int) -> Int64 { seq << positionBits | Int64(position) }

    /// The pack and the place in it of an output's sequence.
    public static func place(of sequence: Int64) -> (pack: Int64, position: Int) {
        (sequence >> positionBits, Int(sequence & (1 << positionBits - 1)))
    }

    /// One entry as read back.
    public struct Entry: Sendable {
        /// The recipient, as stored.
        public var recipient: String
        /// The output kind's name, as stored.
        public var kind: String
        /// The output's document.
        public var payload: [UInt8]
    }

    /// The entries of a pack's `entries`, from `first` on, at most `limit` of them (the ones before
    /// `first` are skipped, not decoded).
    /// - Throws: ``OutboxPackError`` when the bytes end inside an entry.
    public static func entries(_ bytes: UnsafeRawBufferPointer, from first: Int,
                               limit: Int = .max) throws(OutboxPackError) -> [(position: Int, entry: Entry)] {
        var entries: [(position: Int, entry: Entry)] = []
        var at = 0
        var position = 0
        func part() throws(OutboxPackError) -> UnsafeRawBufferPointer {
            guard bytes.count - at >= 4 else { throw OutboxPackError(entry: position) }
            let length = Int(UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: at, as: UInt32.self)))
            guard bytes.count - at - 4 >= length else { throw OutboxPackError(entry: position) }
            defer { at += 4 + length }
            return UnsafeRawBufferPointer(rebasing: bytes[(at + 4)..<(at + 4 + length)])
        }
        while at < bytes.count, entries.count < limit {
            let recipient = try part(), kind = try part(), payload = try part()
            if position >= first {
                entries.append((position, Entry(recipient: String(decoding: recipient, as: UTF8.self),
                                                kind: String(decoding: kind, as: UTF8.self), payload: [UInt8](payload))))
            }
            position += 1
        }
        return entries
    }
}

/// A pack's bytes end inside one of its entries.
public struct OutboxPackError: Error, CustomStringConvertible {
    /// The place of the entry that is cut short.
    public var entry: Int

    /// What the pack's reader says.
    public var description: String { "an outbox pack ends inside its entry \(entry)" }
}
