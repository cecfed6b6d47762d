/// Everything needed to open one MQTT 3.1.1 or MQTT 5 connection with libmosquitto.
public struct MosquittoOptions: Sendable {
    /// The MQTT protocol version spoken on the connection.
    public enum ProtocolVersion: Int, Sendable, CaseIterable {
        /// MQTT 3.1.1 (the default).
        case v311 = 4
        /// MQTT 5: reason codes, session expiry, receive maximum, properties.
        case v5 = 5
    }

    /// TLS settings for `mqtts://`. Verification of the peer and its host name is always on
    /// unless ``insecure`` is set, which is meant for development only.
    public struct TLS: Sendable {
        /// PEM file of trusted certificate authorities.
        public var caFile: String?
        /// Directory of trusted certificate authorities (hashed names).
        public var caPath: String?
        /// Client certificate for mutual TLS.
        public var certFile: String?
        /// Private key of the client certificate.
        public var keyFile: String?
        /// Skips host name verification. Development only.
        public var insecure: Bool
        /// The lowest protocol version accepted; set explicitly because libmosquitto 2.0.11 allows TLS 1.1.
        public var minimumVersion: String

        /// Creates TLS settings; the minimum version defaults to TLS 1.2.
        public init(caFile: String? = nil, caPath: String? = nil, certFile: String? = nil, keyFile: String? = nil,
                    insecure: Bool = false, minimumVersion: String = "tlsv1.2") {
            self.caFile = caFile
            self.caPath = caPath
            self.certFile = certFile
            self.keyFile = keyFile
            self.insecure = insecure
            self.minimumVersion = minimumVersion
        }
    }

    /// Broker host name or address.
    public var host: String
    /// Broker port.
    public var port: Int
    /// Client identifier; keep it stable so a persistent session survives restarts.
    public var clientID: String
    /// `false` asks the broker for a persistent session (queued QoS 1 messages survive a disconnect).
    public var cleanSession: Bool
    /// Keepalive interval in seconds.
    public var keepalive: Int
    /// User name, if the broker requires one.
    public var username: String?
    /// Password; never logged.
    public var password: String?
    /// TLS settings, or `nil` for plain TCP.
    public var tls: TLS?
    /// Outgoing QoS 1 messages in flight at once (libmosquitto's default is 20; 0 = no limit).
    public var maxInflight: Int = 20
    /// The protocol version.
    public var protocolVersion: ProtocolVersion = .v311
    /// MQTT 5: how long the broker keeps the session after a disconnect, in seconds (`cleanSession`
    /// false means clean start false). Ignored by MQTT 3.1.1, whose persistent sessions never expire.
    public var sessionExpirySeconds: UInt32 = 0
    /// MQTT 5: inbound QoS 1 messages the broker may send before it hears their PUBACKs (1–65535).
    public var receiveMaximum: Int = 65_535

    /// Creates connection options.
    public init(host: String, port: Int, clientID: String, cleanSession: Bool = false, keepalive: Int = 30,
                username: String? = nil, password: String? = nil, tls: TLS? = nil) {
        self.host = host
        self.port = port
        self.clientID = clientID
        self.cleanSession = cleanSession
        self.keepalive = keepalive
        self.username = username
        self.password = password
        self.tls = tls
    }
}

extension MosquittoOptions: CustomStringConvertible, CustomDebugStringConvertible {
    /// The broker and the client id, never the credentials: what logs may show of these options.
    public var description: String {
        "\(tls == nil ? "mqtt" : "mqtts")://\(host):\(port) as \(clientID)\(username.map { " (user \($0))" } ?? "")"
    }

    /// The same as ``description``, so reflection over a type that holds these options shows no password either.
    public var debugDescription: String { description }
}
