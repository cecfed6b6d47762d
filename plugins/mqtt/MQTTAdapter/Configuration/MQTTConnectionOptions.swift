import Foundation
import HeraldPluginAPI
import Mosquitto

/// Connection settings shared by the MQTT source and sink (keys at the top of their sections).
public struct MQTTConnectionOptions: Decodable, Sendable {
    /// `mqtt://host[:port]` or `mqtts://host[:port]` (ports default to 1883 / 8883).
    public var url: String
    /// Client id; keep it stable so the broker keeps the persistent session.
    public var clientID: String
    /// User name.
    public var username: String?
    /// Password (use `${ENV_VAR}`); never logged.
    public var password: Secret?
    /// File holding the password (trailing newline ignored).
    public var passwordFile: String?
    /// Keepalive in seconds.
    public var keepalive: Int
    /// TLS settings for `mqtts://`.
    public var tls: MQTTTLSOptions?
    /// `3.1.1` (default) or `5`.
    public var protocolVersion: String
    /// MQTT 5: seconds the broker keeps the session (and queues QoS 1 messages) after a disconnect.
    public var sessionExpirySeconds: Int
    /// MQTT 5: inbound QoS 1 messages the broker may send before their PUBACKs.
    public var receiveMaximum: Int

    /// Seven days: long enough for any restart or maintenance window, short enough that the session of
    /// an instance that was removed for good does not queue messages forever.
    public static let defaultSessionExpirySeconds = 7 * 24 * 3600

    enum CodingKeys: String, CodingKey {
        case url, clientID = "client_id", username, password, passwordFile = "password_file", keepalive, tls
        case protocolVersion = "protocol", sessionExpirySeconds = "session_expiry_s", receiveMaximum = "receive_maximum"
    }

    /// Decodes the connection keys of a source or sink section.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        url = try container.decode(String.self, forKey: .url)
        clientID = try container.decode(String.self, forKey: .clientID)
        username = try container.decodeIfPresent(String.self, forKey: .username)
        password = try container.decodeIfPresent(Secret.self, forKey: .password)
        passwordFile = try container.decodeIfPresent(String.self, forKey: .passwordFile)
        keepalive = try container.decodeIfPresent(Int.self, forKey: .keepalive) ?? 30
        tls = try container.decodeIfPresent(MQTTTLSOptions.self, forKey: .tls)
        protocolVersion = try container.decodeIfPresent(String.self, forKey: .protocolVersion) ?? "3.1.1"
        sessionExpirySeconds = try container.decodeIfPresent(Int.self, forKey: .sessionExpirySeconds) ?? Self.defaultSessionExpirySeconds
        receiveMaximum = try container.decodeIfPresent(Int.self, forKey: .receiveMaximum) ?? 65_535
    }

    /// The protocol version, checked.
    func version() throws(ConfigurationError) -> MosquittoOptions.ProtocolVersion {
        switch protocolVersion {
        case "3.1.1": return .v311
        case "5": return .v5
        default: throw ConfigurationError("must be 3.1.1 or 5, found \(protocolVersion)", keyPath: "protocol")
        }
    }

    /// Parsed endpoint.
    struct Endpoint: Equatable {
        var host: String
        var port: Int
        var secure: Bool
    }

    func endpoint() throws(ConfigurationError) -> Endpoint {
        guard let components = URLComponents(string: url), let scheme = components.scheme,
              let host = components.host, !host.isEmpty else {
            throw ConfigurationError("\"\(url)\" is not a URL like mqtt://host:1883", keyPath: "url")
        }
        switch scheme {
        case "mqtt": return Endpoint(host: host, port: components.port ?? 1883, secure: false)
        case "mqtts": return Endpoint(host: host, port: components.port ?? 8883, secure: true)
        default: throw ConfigurationError("scheme must be mqtt or mqtts, found \(scheme)", keyPath: "url")
        }
    }

    /// Offline checks.
    func validate() throws(ConfigurationError) {
        let endpoint = try endpoint()
        guard !clientID.isEmpty, clientID.utf8.count <= 128, !clientID.contains(where: { "+#/".contains($0) }) else {
            throw ConfigurationError("client_id must be 1–128 characters without '+', '#' or '/'", keyPath: "client_id")
        }
        guard (5...3600).contains(keepalive) else {
            throw ConfigurationError("keepalive must be between 5 and 3600 seconds", keyPath: "keepalive")
        }
        if password != nil, passwordFile != nil {
            throw ConfigurationError("set password or password_file, not both", keyPath: "password_file")
        }
        if let passwordFile, !FileManager.default.isReadableFile(atPath: passwordFile) {
            throw ConfigurationError("cannot read \(passwordFile)", keyPath: "password_file")
        }
        if tls != nil, !endpoint.secure {
            throw ConfigurationError("tls settings need an mqtts:// url", keyPath: "tls")
        }
        try tls?.validate()
        _ = try version()
        guard (0...Int(UInt32.max)).contains(sessionExpirySeconds) else {
            throw ConfigurationError("must be between 0 and \(UInt32.max) seconds", keyPath: "session_expiry_s")
        }
        guard (1...65_535).contains(receiveMaximum) else {
            throw ConfigurationError("must be between 1 and 65535", keyPath: "receive_maximum")
        }
    }

    /// Builds libmosquitto options, reading the password file if one is set.
    func mosquittoOptions(cleanSession: Bool) throws(ConfigurationError) -> MosquittoOptions {
        let endpoint = try endpoint()
        var secret = password?.value
        if let passwordFile {
            guard let text = try? String(contentsOfFile: passwordFile, encoding: .utf8) else {
                throw ConfigurationError("cannot read \(passwordFile)", keyPath: "password_file")
            }
            secret = text.trimmingCharacters(in: .newlines)
        }
        var tlsOptions: MosquittoOptions.TLS?
        if endpoint.secure {
            let tls = tls ?? MQTTTLSOptions()
            tlsOptions = MosquittoOptions.TLS(
                caFile: tls.caFile, caPath: tls.caFile == nil ? (tls.caPath ?? "/etc/ssl/certs") : tls.caPath,
                certFile: tls.certFile, keyFile: tls.keyFile, insecure: tls.insecureSkipVerify)
        }
        var options = MosquittoOptions(host: endpoint.host, port: endpoint.port, clientID: clientID, cleanSession: cleanSession,
                                       keepalive: keepalive, username: username, password: secret, tls: tlsOptions)
        options.protocolVersion = try version()
        options.sessionExpirySeconds = UInt32(clamping: sessionExpirySeconds)
        options.receiveMaximum = receiveMaximum
        return options
    }
}

/// TLS settings. Peer and host name verification are on; TLS 1.2 is the minimum.
public struct MQTTTLSOptions: Decodable, Sendable {
    /// PEM file of trusted CAs (default: the system store).
    public var caFile: String?
    /// Directory of trusted CAs.
    public var caPath: String?
    /// Client certificate (mutual TLS).
    public var certFile: String?
    /// Client key.
    public var keyFile: String?
    /// Disables host name verification. Development only; logged loudly.
    public var insecureSkipVerify: Bool

    enum CodingKeys: String, CodingKey {
        case caFile = "ca_file", caPath = "ca_path", certFile = "cert_file", keyFile = "key_file"
        case insecureSkipVerify = "insecure_skip_verify"
    }

    init() {
        insecureSkipVerify = false
    }

    /// Decodes the `tls` mapping.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        caFile = try container.decodeIfPresent(String.self, forKey: .caFile)
        caPath = try container.decodeIfPresent(String.self, forKey: .caPath)
        certFile = try container.decodeIfPresent(String.self, forKey: .certFile)
        keyFile = try container.decodeIfPresent(String.self, forKey: .keyFile)
        insecureSkipVerify = try container.decodeIfPresent(Bool.self, forKey: .insecureSkipVerify) ?? false
    }

    func validate() throws(ConfigurationError) {
        for (key, path) in [("ca_file", caFile), ("cert_file", certFile), ("key_file", keyFile)] {
            if let path, !FileManager.default.isReadableFile(atPath: path) {
                throw ConfigurationError("cannot read \(path)", keyPath: "tls.\(key)")
            }
        }
        if (certFile == nil) != (keyFile == nil) {
            throw ConfigurationError("cert_file and key_file go together", keyPath: "tls")
        }
    }
}
