/// Text and bytes bound to the statements of one transaction, copied into a few large blocks that stay
/// in place while a statement runs, so that SQLite reads each value where it is (`SQLITE_STATIC`).
///
/// Bound with `SQLITE_TRANSIENT`, SQLite copies every value into an allocation of its own and frees it
/// when the bindings are cleared: at about twenty values per message those allocations, each behind
/// SQLite's memory-statistics mutex, cost more than the rest of binding. Here a transaction allocates a
/// block of ``blockSize`` bytes (or one per larger value) and its statements reuse it in turn: each run
/// takes space from a ``Mark`` and gives it back when it is over (``GRDB/Statement/withBindings(in:_:_:)``
/// clears the statement's bindings first), so the heap does not see a block come and go per statement.
final class BindingArena {
    /// Bytes per block; a larger value gets a block of its own size.
    static let blockSize = 32 * 1024

    /// A position in the arena to give space back to.
    struct Mark {
        fileprivate var block: Int
        fileprivate var used: Int
    }

    // Neither is checked for exclusive access at run time: the arena belongs to one transaction's thread,
    // and nothing it calls while it changes them (the `write` closures of `keep(upTo:_:)` fill bytes) reaches
    // the arena again. Checked, they took about 1,900 instructions a message (checks for every value bound).
    @exclusivity(unchecked) private var blocks: [(start: UnsafeMutableRawPointer, size: Int)] = []
    /// The block values are copied into, and how much of it is taken.
    @exclusivity(unchecked) private var current = Mark(block: 0, used: 0)

    init() {}

    /// Where the arena stands, for ``release(to:)``.
    var mark: Mark { current }

    /// Gives back everything kept since `mark` (the memory stays for the next values).
    func release(to mark: Mark) { current = mark }

    /// Copies `bytes` into the arena and returns where the copy is, or `nil` for no bytes.
    func keep(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawPointer? {
        keep(upTo: bytes.count) { target in
            target.copyMemory(from: bytes)
            return bytes.count
        }?.start
    }

    /// Lets `write` fill up to `maximum` bytes in the arena and keeps the bytes it says it wrote.
    /// - Returns: where they are and how many, or `nil` for none.
    func keep(upTo maximum: Int, _ write: (UnsafeMutableRawBufferPointer) -> Int) -> (start: UnsafeRawPointer, count: Int)? {
        guard maximum > 0 else { return nil }
        if current.block >= blocks.count || blocks[current.block].size - current.used < maximum {
            moveToBlock(holding: maximum)
        }
        let target = blocks[current.block].start + current.used
        let written = write(UnsafeMutableRawBufferPointer(start: target, count: maximum))
        precondition((0...maximum).contains(written), "wrote past the space it was given")
        current.used += written
        return written == 0 ? nil : (UnsafeRawPointer(target), written)
    }

    /// Makes the current block one after the current that holds `count` bytes, reusing the next block when
    /// it is large enough.
    private func moveToBlock(holding count: Int) {
        let next = current.block < blocks.count && current.used > 0 ? current.block + 1 : current.block
        if next >= blocks.count || blocks[next].size < count {
            let size = max(Self.blockSize, count)
            blocks.insert((UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 1), size), at: next)
        }
        current = Mark(block: next, used: 0)
    }

    deinit {
        for block in blocks { block.start.deallocate() }
    }
}
