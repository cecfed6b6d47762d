import CMosquitto

#if canImport(Glibc)
import Glibc
#endif

/// One libmosquitto client (MQTT 3.1.1 or 5) in the library's *threaded* state, driven by a loop the caller owns.
///
/// The threaded state matters for delivery safety: libmosquitto then only *queues* the PUBACK for an
/// inbound QoS 1 message, and the packet leaves when the owner calls ``writePending()``. A source can
/// therefore read a burst (``readPacket()``), commit it, and only then let the acknowledgements go.
///
/// Thread confinement: every method except ``publish(topic:payload:qos:retain:)`` and ``wake()`` must be
/// called from the single thread that drives the loop; callbacks run on that thread too. This is why
/// the type is `@unchecked Sendable`: it is shared only so another thread may publish or wake the loop.
public final class MosquittoClient: @unchecked Sendable {
    private let handle: OpaquePointer
    private let box: Unmanaged<CallbackBox>
    private let wakeDescriptor: Int32
    /// The options the client was created with.
    public let options: MosquittoOptions

    /// Creates a client and applies credentials and TLS settings. Does not connect.
    /// - Throws: ``MosquittoError`` when libmosquitto rejects an option (e.g. an unreadable CA file).
    public init(options: MosquittoOptions, callbacks: MosquittoCallbacks) throws(MosquittoError) {
        _ = MosquittoLibrary.initialised
        let box = Unmanaged.passRetained(CallbackBox(callbacks, protocolVersion: options.protocolVersion))
        guard let handle = mosquitto_new(options.clientID, options.cleanSession, box.toOpaque()) else {
            box.release()
            throw MosquittoError(operation: "create client", code: Int32(MOSQ_ERR_NOMEM.rawValue))
        }
        self.handle = handle
        self.box = box
        self.options = options
        self.wakeDescriptor = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        mosquitto_threaded_set(handle, true)
        Self.installCallbacks(handle)
        try configure(options)
    }

    deinit {
        mosquitto_destroy(handle)
        box.release()
        if wakeDescriptor >= 0 { close(wakeDescriptor) }
    }

    private func configure(_ options: MosquittoOptions) throws(MosquittoError) {
        try MosquittoError.check(mosquitto_max_inflight_messages_set(handle, UInt32(max(0, options.maxInflight))), "set inflight window")
        // Small packets (PUBACKs, single PUBLISHes) leave at once instead of waiting for the peer's
        // delayed ACK (Nagle): otherwise a PUBACK can sit in the kernel for tens of milliseconds.
        try MosquittoError.check(mosquitto_int_option(handle, MOSQ_OPT_TCP_NODELAY, 1), "set TCP_NODELAY")
        if options.protocolVersion == .v5 {
            try MosquittoError.check(mosquitto_int_option(handle, MOSQ_OPT_PROTOCOL_VERSION, Int32(MQTT_PROTOCOL_V5)),
                                     "select MQTT 5")
            // libmosquitto's own default is 20, which would cap how many messages a group commit holds.
            try MosquittoError.check(
                mosquitto_int_option(handle, MOSQ_OPT_RECEIVE_MAXIMUM, Int32(min(max(options.receiveMaximum, 1), 65_535))),
                "set receive maximum")
        }
        if options.username != nil || options.password != nil {
            try MosquittoError.check(mosquitto_username_pw_set(handle, options.username, options.password), "set credentials")
        }
        guard let tls = options.tls else { return }
        try MosquittoError.check(
            mosquitto_tls_set(handle, tls.caFile, tls.caPath, tls.certFile, tls.keyFile, nil), "configure TLS")
        try MosquittoError.check(mosquitto_tls_opts_set(handle, 1, tls.minimumVersion, nil), "set TLS version")
        try MosquittoError.check(mosquitto_tls_insecure_set(handle, tls.insecure), "set TLS verification")
    }

    /// Opens the TCP (and TLS) connection and sends CONNECT. Blocks through the handshake,
    /// so call it on the loop's own thread. CONNACK arrives later through ``readPacket()``.
    public func connect() throws(MosquittoError) {
        let code: Int32
        if options.protocolVersion == .v5, !options.cleanSession, options.sessionExpirySeconds > 0 {
            var properties: OpaquePointer?
            defer { mosquitto_property_free_all(&properties) }
            try MosquittoError.check(
                mosquitto_property_add_int32(&properties, Int32(MQTT_PROP_SESSION_EXPIRY_INTERVAL.rawValue), options.sessionExpirySeconds),
                "set session expiry")
            code = mosquitto_connect_bind_v5(handle, options.host, Int32(options.port), Int32(options.keepalive), nil, properties)
        } else {
            code = mosquitto_connect(handle, options.host, Int32(options.port), Int32(options.keepalive))
        }
        try MosquittoError.check(code, "connect to \(options.host):\(options.port)")
    }

    /// Queues a SUBSCRIBE for `pattern` at `qos`.
    /// - Returns: the message id that ``MosquittoCallbacks/onSubscribe`` reports with the broker's answer.
    @discardableResult
    public func subscribe(_ pattern: String, qos: Int32) throws(MosquittoError) -> Int32 {
        var messageID: Int32 = 0
        try MosquittoError.check(mosquitto_subscribe_v5(handle, &messageID, pattern, qos, 0, nil), "subscribe \(pattern)")
        return messageID
    }

    /// Queues a PUBLISH and, unless `wakeLoop` is false, wakes the loop. Safe from any thread.
    ///
    /// A caller queueing many publishes at once passes `wakeLoop: false` and calls ``wake()`` after
    /// the last: the loop then writes them in one turn instead of waking for each.
    /// - Returns: the message id that ``MosquittoCallbacks/onPublish`` will report once acknowledged.
    @discardableResult
    public func publish(topic: String, payload: [UInt8], qos: Int32, retain: Bool,
                        properties: MosquittoPublishProperties = MosquittoPublishProperties(),
                        wakeLoop: Bool = true) throws(MosquittoError) -> Int32 {
        var messageID: Int32 = 0
        var list: OpaquePointer?
        defer { mosquitto_property_free_all(&list) }
        if options.protocolVersion == .v5 {
            if let seconds = properties.messageExpirySeconds {
                try MosquittoError.check(
                    mosquitto_property_add_int32(&list, Int32(MQTT_PROP_MESSAGE_EXPIRY_INTERVAL.rawValue), seconds), "set message expiry")
            }
            if let contentType = properties.contentType {
                try MosquittoError.check(
                    mosquitto_property_add_string(&list, Int32(MQTT_PROP_CONTENT_TYPE.rawValue), contentType), "set content type")
            }
        }
        let code = payload.withUnsafeBytes { bytes in
            mosquitto_publish_v5(handle, &messageID, topic, Int32(bytes.count), bytes.baseAddress, qos, retain, list)
        }
        try MosquittoError.check(code, "publish to \(topic)")
        if wakeLoop { wake() }
        return messageID
    }

    /// Reads and handles at most one packet (callbacks fire during this call).
    public func readPacket() throws(MosquittoError) {
        try MosquittoError.check(mosquitto_loop_read(handle, 1), "read")
    }

    /// Writes every queued packet (PUBACKs, SUBSCRIBEs, PUBLISHes) that the socket accepts.
    public func writePending() throws(MosquittoError) {
        guard mosquitto_want_write(handle) else { return }
        try MosquittoError.check(mosquitto_loop_write(handle, 1), "write")
    }

    /// Keepalive and housekeeping; call on every loop turn.
    public func housekeeping() throws(MosquittoError) {
        try MosquittoError.check(mosquitto_loop_misc(handle), "keepalive")
    }

    /// Sends DISCONNECT and flushes it.
    public func disconnect() {
        _ = mosquitto_disconnect(handle)
        _ = mosquitto_loop_write(handle, 1)
    }

    /// Wakes a thread blocked in ``waitForActivity(timeoutMilliseconds:)``. Safe from any thread.
    public func wake() {
        var one: UInt64 = 1
        _ = write(wakeDescriptor, &one, 8)
    }

    /// Blocks until the socket is readable, writable with data pending (unless `writes` is false:
    /// the caller holds its queued packets back for now), woken, or the timeout passes.
    /// - Returns: whether the socket has data to read.
    public func waitForActivity(timeoutMilliseconds: Int32, writes: Bool = true) -> Bool {
        let socket = mosquitto_socket(handle)
        let wantWrite = writes && mosquitto_want_write(handle)
        var descriptors = [
            pollfd(fd: socket, events: Int16(POLLIN) | (wantWrite ? Int16(POLLOUT) : 0), revents: 0),
            pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0),
        ]
        let count = socket >= 0 ? 2 : 1
        let ready = descriptors.withUnsafeMutableBufferPointer { buffer in
            poll(socket >= 0 ? buffer.baseAddress : buffer.baseAddress.map { $0 + 1 }, nfds_t(count), timeoutMilliseconds)
        }
        if ready > 0, descriptors[1].revents & Int16(POLLIN) != 0 {
            var drained: UInt64 = 0
            _ = read(wakeDescriptor, &drained, 8)
        }
        return socket >= 0 && descriptors[0].revents & Int16(POLLIN | POLLERR | POLLHUP) != 0
    }
}

/// Calls `mosquitto_lib_init` once per process before the first client is made.
private enum MosquittoLibrary {
    static let initialised: Bool = {
        mosquitto_lib_init()
        return true
    }()
}

/// The object libmosquitto hands back to every callback as `userdata`.
private final class CallbackBox: Sendable {
    let callbacks: MosquittoCallbacks
    let protocolVersion: MosquittoOptions.ProtocolVersion
    init(_ callbacks: MosquittoCallbacks, protocolVersion: MosquittoOptions.ProtocolVersion) {
        self.callbacks = callbacks
        self.protocolVersion = protocolVersion
    }

    static func from(_ pointer: UnsafeMutableRawPointer?) -> CallbackBox? {
        pointer.map { Unmanaged<CallbackBox>.fromOpaque($0).takeUnretainedValue() }
    }
}

extension MosquittoClient {
    // The _v5 callbacks serve both protocol versions (MQTT 3.1.1 passes no properties).
    fileprivate static func installCallbacks(_ handle: OpaquePointer) {
        mosquitto_connect_v5_callback_set(handle) { _, userdata, code, flags, _ in
            guard let box = CallbackBox.from(userdata) else { return }
            box.callbacks.onConnect(MosquittoReasonCode(code, protocolVersion: box.protocolVersion, isConnack: true), flags & 1 != 0)
        }
        mosquitto_message_v5_callback_set(handle) { _, userdata, message, properties in
            guard let box = CallbackBox.from(userdata), let message = message?.pointee else { return }
            let topic = message.topic.map { String(cString: $0) } ?? ""
            let length = Int(message.payloadlen)
            let payload: [UInt8] = length > 0 && message.payload != nil
                ? Array(UnsafeRawBufferPointer(start: message.payload, count: length)) : []
            let (userProperties, contentType) = properties.map(MosquittoClient.readProperties) ?? ([], nil)
            box.callbacks.onMessage(MosquittoMessage(topic: topic, payload: payload, qos: message.qos, retain: message.retain,
                                                     userProperties: userProperties, contentType: contentType))
        }
        mosquitto_publish_v5_callback_set(handle) { _, userdata, messageID, reason, _ in
            guard let box = CallbackBox.from(userdata) else { return }
            box.callbacks.onPublish(messageID, MosquittoReasonCode(reason, protocolVersion: box.protocolVersion))
        }
        mosquitto_subscribe_v5_callback_set(handle) { _, userdata, messageID, count, granted, _ in
            guard let box = CallbackBox.from(userdata) else { return }
            let codes = (0..<Int(max(count, 0))).map { index in
                MosquittoReasonCode(granted?[index] ?? 0x80, protocolVersion: box.protocolVersion)
            }
            box.callbacks.onSubscribe(messageID, codes)
        }
        mosquitto_disconnect_callback_set(handle) { _, userdata, code in
            CallbackBox.from(userdata)?.callbacks.onDisconnect(code)
        }
    }

    /// User properties and content type of an inbound MQTT 5 PUBLISH.
    fileprivate static func readProperties(_ list: OpaquePointer) -> ([(name: String, value: String)], String?) {
        var pairs: [(name: String, value: String)] = []
        var name: UnsafeMutablePointer<CChar>?
        var value: UnsafeMutablePointer<CChar>?
        var cursor = mosquitto_property_read_string_pair(list, Int32(MQTT_PROP_USER_PROPERTY.rawValue), &name, &value, false)
        while let found = cursor {
            if let name, let value { pairs.append((String(cString: name), String(cString: value))) }
            free(name)
            free(value)
            name = nil
            value = nil
            cursor = mosquitto_property_read_string_pair(found, Int32(MQTT_PROP_USER_PROPERTY.rawValue), &name, &value, true)
        }
        var contentType: UnsafeMutablePointer<CChar>?
        var type: String?
        if mosquitto_property_read_string(list, Int32(MQTT_PROP_CONTENT_TYPE.rawValue), &contentType, false) != nil, let contentType {
            type = String(cString: contentType)
        }
        free(contentType)
        return (pairs, type)
    }
}
