import HeraldPluginAPI
import NIOCore
import PostgresNIO

/// A `bytea[]` parameter whose elements are written straight into the statement's buffer as they are
/// produced, in PostgreSQL's binary array format. A batch's outbox payloads are encoded one at a time
/// into the statement instead of first into a buffer each: a batch of 5-member group messages holds
/// 50,000 of them, and the copies held in between were the second largest part of the heap's peak.
struct ByteaArray<Elements: Collection>: PostgresNonThrowingEncodable {
    let elements: Elements
    /// Writes one element's bytes at the end of the buffer.
    let write: (Elements.Element, inout ByteBuffer) -> Void

    /// The array of `bytes(element)` for each of `elements`, in order.
    init(_ elements: Elements, _ bytes: @escaping (Elements.Element) -> [UInt8]) {
        self.elements = elements
        write = { element, buffer in buffer.writeBytes(bytes(element)) }
    }

    /// The array of the outputs' wire documents, each written straight into the statement.
    init(outputs elements: Elements, _ output: @escaping (Elements.Element) -> Output) {
        self.elements = elements
        write = { element, buffer in
            let value = output(element)
            buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: OutputWireFormat.encodedSizeBound(value)) {
                OutputWireFormat.encode(value, into: $0)
            }
        }
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
