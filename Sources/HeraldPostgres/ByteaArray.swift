import NIOCore
import PostgresNIO

/// A `bytea[]` parameter whose elements are written straight into the statement's buffer as they are
/// produced, in PostgreSQL's binary array format. A batch's outbox packs are encoded output by output
/// into the statement instead of first into a buffer each: a batch of 5-member group messages holds
/// 50,000 outputs, and copies held in between were the second largest part of the heap's peak.
struct ByteaArray<Elements: Collection>: PostgresNonThrowingEncodable {
    let elements: Elements
    /// Writes one element's bytes at the end of the buffer.
    let write: (Elements.Element, inout ByteBuffer) -> Void

    /// The array of what `write(element, &buffer)` writes for each of `elements`, in order.
    init(_ elements: Elements, writing write: @escaping (Elements.Element, inout ByteBuffer) -> Void) {
        self.elements = elements
        self.write = write
    }

    /// The array of `bytes(element)` for each of `elements`, in order.
    init(_ elements: Elements, _ bytes: @escaping (Elements.Element) -> [UInt8]) {
        self.elements = elements
        write = { element, buffer in buffer.writeBytes(bytes(element)) }
    }

    static var psqlType: PostgresDataType { .byteaArray }
    static var psqlFormat: PostgresFormat { .binary }

    /// The header (dimensions, no NULLs, element type, length, lower bound 1), then each element as its
    /// length and bytes: what postgres-nio writes for `[ByteBuffer]`.
    func encode<JSONEncoder: PostgresJSONEncoder>(into buffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>) {
        buffer.writeInteger(elements.isEmpty ? 0 : 1, as: UInt32.self)
        buffer.writeInteger(0, as: Int32.self)
        buffer.writeInteger(PostgresDataType.bytea.rawValue)
        guard !elements.isEmpty else { return }
        buffer.writeInteger(Int32(elements.count))
        buffer.writeInteger(1, as: Int32.self)
        for element in elements {
            // The length goes before the bytes; it is known once they are written.
            let lengthAt = buffer.writerIndex
            buffer.writeInteger(0, as: Int32.self)
            let start = buffer.writerIndex
            write(element, &buffer)
            buffer.setInteger(Int32(buffer.writerIndex - start), at: lengthAt)
        }
    }
}
