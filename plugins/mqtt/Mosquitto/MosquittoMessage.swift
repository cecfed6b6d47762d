/// One inbound PUBLISH, copied out of libmosquitto's buffers (which are freed after the callback).
public struct MosquittoMessage: Sendable {
    /// The topic the message was published to.
    public let topic: String
    /// The raw payload bytes.
    public let payload: [UInt8]
    /// The QoS the message was delivered with.
    public let qos: Int32
    /// Whether the broker delivered it as a retained message.
    public let retain: Bool

    /// Creates a message value.
    public init(topic: String, payload: [UInt8], qos: Int32, retain: Bool) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
    }
}

/// The callbacks a ``MosquittoClient`` invokes. They run on the thread that drives the client's loop.
public struct MosquittoCallbacks: Sendable {
    /// CONNACK arrived: the return code (0 = accepted) and whether the broker kept a session.
    public var onConnect: @Sendable (_ code: Int32, _ sessionPresent: Bool) -> Void
    /// A PUBLISH arrived.
    public var onMessage: @Sendable (MosquittoMessage) -> Void
    /// The broker acknowledged our QoS 1 publish with this message id.
    public var onPublish: @Sendable (_ messageID: Int32) -> Void
    /// The connection ended; code 0 means we asked for it.
    public var onDisconnect: @Sendable (_ code: Int32) -> Void

    /// Creates a callback set; every callback defaults to doing nothing.
    public init(onConnect: @escaping @Sendable (Int32, Bool) -> Void = { _, _ in },
                onMessage: @escaping @Sendable (MosquittoMessage) -> Void = { _ in },
                onPublish: @escaping @Sendable (Int32) -> Void = { _ in },
                onDisconnect: @escaping @Sendable (Int32) -> Void = { _ in }) {
        self.onConnect = onConnect
        self.onMessage = onMessage
        self.onPublish = onPublish
        self.onDisconnect = onDisconnect
    }
}
