import CMosquitto

#if canImport(Glibc)
import Glibc
#endif

/// One libmosquitto client in the library's *threaded* state, driven by a loop the caller owns.
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
        let box = Unmanaged.passRetained(CallbackBox(callbacks))
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
        let code = mosquitto_connect(handle, options.host, Int32(options.port), Int32(options.keepalive))
        try MosquittoError.check(code, "connect to \(options.host):\(options.port)")
    }

    /// Queues a SUBSCRIBE for `pattern` at `qos`.
    public func subscribe(_ pattern: String, qos: Int32) throws(MosquittoError) {
        try MosquittoError.check(mosquitto_subscribe(handle, nil, pattern, qos), "subscribe \(pattern)")
    }

    /// Queues a PUBLISH and, unless `wakeLoop` is false, wakes the loop. Safe from any thread.
    ///
    /// A caller queueing many publishes at once passes `wakeLoop: false` and calls ``wake()`` after
    /// the last: the loop then writes them in one turn instead of waking for each.
    /// - Returns: the message id that ``MosquittoCallbacks/onPublish`` will report once acknowledged.
    @discardableResult
    public func publish(topic: String, payload: [UInt8], qos: Int32, retain: Bool, wakeLoop: Bool = true) throws(MosquittoError) -> Int32 {
        var messageID: Int32 = 0
        let code = payload.withUnsafeBytes { bytes in
            mosquitto_publish(handle, &messageID, topic, Int32(bytes.count), bytes.baseAddress, qos, retain)
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
    init(_ callbacks: MosquittoCallbacks) { self.callbacks = callbacks }

    static func from(_ pointer: UnsafeMutableRawPointer?) -> CallbackBox? {
        pointer.map { Unmanaged<CallbackBox>.fromOpaque($0).takeUnretainedValue() }
    }
}

extension MosquittoClient {
    fileprivate static func installCallbacks(_ handle: OpaquePointer) {
        mosquitto_connect_with_flags_callback_set(handle) { _, userdata, code, flags in
            CallbackBox.from(userdata)?.callbacks.onConnect(code, flags & 1 != 0)
        }
        mosquitto_message_callback_set(handle) { _, userdata, message in
            guard let box = CallbackBox.from(userdata), let message = message?.pointee else { return }
            let topic = message.topic.map { String(cString: $0) } ?? ""
            let length = Int(message.payloadlen)
            let payload: [UInt8] = length > 0 && message.payload != nil
                ? Array(UnsafeRawBufferPointer(start: message.payload, count: length)) : []
            box.callbacks.onMessage(MosquittoMessage(topic: topic, payload: payload, qos: message.qos, retain: message.retain))
        }
        mosquitto_publish_callback_set(handle) { _, userdata, messageID in
            CallbackBox.from(userdata)?.callbacks.onPublish(messageID)
        }
        mosquitto_disconnect_callback_set(handle) { _, userdata, code in
            CallbackBox.from(userdata)?.callbacks.onDisconnect(code)
        }
    }
}
