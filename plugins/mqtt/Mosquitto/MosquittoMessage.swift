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
    /// MQTT 5 user properties, in the order they arrived (empty for MQTT 3.1.1).
    public let userProperties: [(name: String, value: String)]
    /// MQTT 5 content type, if the publisher set one.
    public let contentType: String?

    /// Creates a message value.
    public init(topic: String, payload: [UInt8], qos: Int32, retain: Bool,
                userProperties: [(name: String, value: String)] = [], contentType: String? = nil) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
        self.userProperties = userProperties
        self.contentType = contentType
    }
}

/// MQTT 5 properties of an outgoing PUBLISH (ignored on an MQTT 3.1.1 connection).
public struct MosquittoPublishProperties: Sendable, Equatable {
    /// Seconds after which the broker discards the message if it is still undelivered.
    public var messageExpirySeconds: UInt32?
    /// The payload's content type, e.g. `application/json`.
    public var contentType: String?

    /// Creates publish properties.
    public init(messageExpirySeconds: UInt32? = nil, contentType: String? = nil) {
        self.messageExpirySeconds = messageExpirySeconds
        self.contentType = contentType
    }

    /// Whether no property is set.
    public var isEmpty: Bool { messageExpirySeconds == nil && contentType == nil }
}

/// The callbacks a ``MosquittoClient`` invokes. They run on the thread that drives the client's loop.
public struct MosquittoCallbacks: Sendable {
    /// CONNACK arrived: the return or reason code (0 = accepted) and whether the broker kept a session.
    public var onConnect: @Sendable (_ code: MosquittoReasonCode, _ sessionPresent: Bool) -> Void
    /// A PUBLISH arrived.
    public var onMessage: @Sendable (MosquittoMessage) -> Void
    /// The broker answered our QoS 1 publish with this message id: a reason code of 0x80 or above
    /// (MQTT 5 only) means it refused the message.
    public var onPublish: @Sendable (_ messageID: Int32, _ reason: MosquittoReasonCode) -> Void
    /// SUBACK arrived for the SUBSCRIBE with this message id: one granted QoS or reason code per filter
    /// (0x80 and above are refusals).
    public var onSubscribe: @Sendable (_ messageID: Int32, _ granted: [MosquittoReasonCode]) -> Void
    /// The connection ended; code 0 means we asked for it.
    public var onDisconnect: @Sendable (_ code: Int32) -> Void

    /// Creates a callback set; every callback defaults to doing nothing.
    public init(onConnect: @escaping @Sendable (MosquittoReasonCode, Bool) -> Void = { _, _ in },
                onMessage: @escaping @Sendable (MosquittoMessage) -> Void = { _ in },
                onPublish: @escaping @Sendable (Int32, MosquittoReasonCode) -> Void = { _, _ in },
                onSubscribe: @escaping @Sendable (Int32, [MosquittoReasonCode]) -> Void = { _, _ in },
                onDisconnect: @escaping @Sendable (Int32) -> Void = { _ in }) {
        self.onConnect = onConnect
        self.onMessage = onMessage
        self.onPublish = onPublish
        self.onSubscribe = onSubscribe
        self.onDisconnect = onDisconnect
    }
}
