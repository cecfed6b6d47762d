import CMosquitto

/// A libmosquitto failure: the operation that failed and the library's return code.
///
/// Every libmosquitto return code is mapped to this type in exactly one place,
/// ``MosquittoError/check(_:_:)``, so no caller ever sees a raw C integer.
public struct MosquittoError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What the wrapper was doing, e.g. `"connect"` or `"subscribe"`.
    public let operation: String
    /// The `MOSQ_ERR_*` code libmosquitto returned.
    public let code: Int32
    /// For a refused connection, the broker's CONNACK reason.
    public let connackCode: Int32?

    /// Creates an error for `operation` with libmosquitto's return `code`.
    public init(operation: String, code: Int32, connackCode: Int32? = nil) {
        self.operation = operation
        self.code = code
        self.connackCode = connackCode
    }

    /// Whether the failure means the connection is gone (so the caller should reconnect).
    public var isConnectionLost: Bool {
        let lost: [mosq_err_t] = [MOSQ_ERR_NO_CONN, MOSQ_ERR_CONN_LOST, MOSQ_ERR_CONN_REFUSED, MOSQ_ERR_ERRNO,
                                  MOSQ_ERR_KEEPALIVE, MOSQ_ERR_PROTOCOL, MOSQ_ERR_TLS, MOSQ_ERR_EAI]
        return lost.contains { Int32($0.rawValue) == code }
    }

    /// A human-readable description: the operation, libmosquitto's message and any CONNACK reason.
    public var description: String {
        var text = "\(operation): \(String(cString: mosquitto_strerror(code)))"
        if let connackCode {
            text += " (\(String(cString: mosquitto_connack_string(connackCode))))"
        }
        return text
    }

    /// Throws a ``MosquittoError`` unless `code` is `MOSQ_ERR_SUCCESS`.
    static func check(_ code: Int32, _ operation: String) throws(MosquittoError) {
        guard code == Int32(MOSQ_ERR_SUCCESS.rawValue) else {
            throw MosquittoError(operation: operation, code: code)
        }
    }
}
