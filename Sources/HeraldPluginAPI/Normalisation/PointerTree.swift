/// Several JSON pointers merged by their common prefixes, for reading the values they name from a
/// document in one pass (``JSONParser/capture(_:_:)``) instead of building the whole document.
///
/// Each pointer has a slot, its index in the list the tree was made from. A node is one reference
/// token on the way down; the value at a node is built in full only when a pointer ends there, and
/// every pointer that goes on below it then resolves inside that value.
struct PointerTree: Sendable {
    struct Node: Sendable {
        /// The reference token that leads here from the parent (empty at the root).
        let token: String
        /// The array index the token names (as ``JSONValue/value(at:)`` reads it), if any.
        let arrayIndex: Int?
        /// Child nodes, by index into ``PointerTree/nodes``.
        var children: [Int] = []
        /// The children whose token is ASCII, with its bytes: an ASCII key leads to one exactly when the
        /// bytes are equal.
        var asciiChildren: [(token: [UInt8], node: Int)] = []
        /// The other children, compared with a key as strings (as a dictionary compares keys).
        var otherChildren: [(token: String, node: Int)] = []
        /// Slots whose pointer ends here.
        var targets: [Int] = []
        /// Slots whose pointer goes on below, with the tokens left after this node.
        var below: [(slot: Int, tokens: ArraySlice<String>)] = []
        /// Every slot at or below this node: what a repeated key resets before it is read again.
        var slots: [Int] = []

        init(token: String) {
            self.token = token
            arrayIndex = Int(token)
        }
    }

    /// The nodes; the root is the first.
    private(set) var nodes: [Node] = [Node(token: "")]
    /// How many pointers the tree was made from.
    let slotCount: Int

    /// Merges `pointers`; text that is not a pointer names nothing and gets no node.
    init(_ pointers: [JSONPointer]) {
        slotCount = pointers.count
        for (slot, pointer) in pointers.enumerated() where pointer.isPointer {
            var node = 0
            nodes[node].slots.append(slot)
            for (depth, token) in pointer.tokens.enumerated() {
                nodes[node].below.append((slot, pointer.tokens[depth...]))
                node = child(of: node, token: token)
                nodes[node].slots.append(slot)
            }
            nodes[node].targets.append(slot)
        }
    }

    private mutating func child(of parent: Int, token: String) -> Int {
        if let existing = nodes[parent].children.first(where: { nodes[$0].token == token }) { return existing }
        let child = nodes.count
        nodes.append(Node(token: token))
        nodes[parent].children.append(child)
        if token.utf8.allSatisfy({ $0 < 0x80 }) {
            nodes[parent].asciiChildren.append((Array(token.utf8), child))
        } else {
            nodes[parent].otherChildren.append((token, child))
        }
        return child
    }

    /// Puts the values of the pointers at and below `node` into `slots`, from `value`, the value at `node`.
    func assign(_ value: JSONValue, at node: Int, into slots: inout [JSONValue?]) {
        for slot in nodes[node].targets { slots[slot] = value }
        for (slot, tokens) in nodes[node].below { slots[slot] = value.value(tokens: tokens) }
    }

    /// Clears the slots at and below `node`: a key that repeats replaces what an earlier one named.
    func clear(_ node: Int, in slots: inout [JSONValue?]) {
        for slot in nodes[node].slots { slots[slot] = nil }
    }

    /// The child of `node` that an object key given as ASCII bytes leads to.
    func child(of node: Int, asciiKey key: ArraySlice<UInt8>) -> Int? {
        next: for (token, child) in nodes[node].asciiChildren where token.count == key.count {
            var position = key.startIndex
            for byte in token {
                guard byte == key[position] else { continue next }
                position += 1
            }
            return child
        }
        // A non-ASCII token can still equal an ASCII key (U+212A KELVIN SIGN is canonically "K").
        let others = nodes[node].otherChildren
        guard !others.isEmpty else { return nil }
        let text = String(decoding: key, as: UTF8.self)
        return others.first { $0.token == text }?.node
    }

    /// The child of `node` that an object key leads to, compared as dictionary keys compare.
    func child(of node: Int, key: String) -> Int? {
        nodes[node].children.first { nodes[$0].token == key }
    }
}
