import HeraldCore
import NIOCore

extension OutboxPack {
    /// Writes the pack's entries into the statement's buffer (``writeEntries(of:into:)``, in place).
    func writeEntries(of rows: [OutboxRow], into buffer: inout ByteBuffer) {
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: entriesSizeBound(of: rows)) { writeEntries(of: rows, into: $0) }
    }

    /// The entries of a pack's `entries` as the server returned them, from `first` on.
    /// - Throws: ``PostgresStoreError`` when the bytes end inside an entry.
    static func entries(_ bytes: ByteBuffer, from first: Int) throws -> [(position: Int, entry: Entry)] {
        do {
            return try bytes.withUnsafeReadableBytes { bytes throws(OutboxPackError) in try entries(bytes, from: first) }
        } catch {
            throw PostgresStoreError.statement(error.description)
        }
    }
}
