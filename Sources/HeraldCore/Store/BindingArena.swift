/// Text and bytes bound to one run of a statement, copied into a few large blocks that stay in place
/// until the run is over, so that SQLite reads each value where it is (`SQLITE_STATIC`).
///
/// Bound with `SQLITE_TRANSIENT`, SQLite copies every value into an allocation of its own and frees it
/// when the bindings are cleared: at about twenty values per message those allocations, each behind
/// SQLite's memory-statistics mutex, cost more than the rest of binding. Here a run makes one allocation
/// per ``blockSize`` bytes. The owner must clear the statement's bindings before it lets the arena go
/// (``GRDB/Statement/withBindings(_:_:)`` does).
final class BindingArena {
    /// Bytes per block; a larger value gets a block of its own size.
    static let blockSize = 32 * 1024

    private var blocks: [UnsafeMutableRawPointer] = []
    private var next: UnsafeMutableRawPointer?
    private var remaining = 0

    init() {}

    /// Copies `bytes` into the arena and returns where the copy is, or `nil` for no bytes.
    func keep(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawPointer? {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return nil }
        let target: UnsafeMutableRawPointer
        if let next, bytes.count <= remaining {
            target = next
        } else {
            let size = max(Self.blockSize, bytes.count)
            target = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 1)
            blocks.append(target)
            remaining = size
        }
        target.copyMemory(from: source, byteCount: bytes.count)
        next = target + bytes.count
        remaining -= bytes.count
        return UnsafeRawPointer(target)
    }

    deinit {
        for block in blocks { block.deallocate() }
    }
}
