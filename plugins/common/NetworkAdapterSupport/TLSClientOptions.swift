import Foundation
public import HeraldPluginAPI
public import NIOSSL

/// The `tls:` block shared by the WebSocket source, the REST source and the webhook sink.
///
/// Secure by default: the system trust store (or `ca_file`), host name verification, TLS 1.2 as the
/// minimum. Verification can only be turned off with `insecure_skip_verify: true`, for development.
public struct TLSClientOptions: Decodable, Sendable, Hashable {
    /// CA certificates (PEM) to trust instead of the system store.
    public var caFile: String?
    /// Client certificate chain (PEM) for mutual TLS.
    public var certFile: String?
    /// Client private key (PEM) for mutual TLS.
    public var keyFile: String?
    /// Lowest accepted protocol version: `"1.2"` (default) or `"1.3"`.
    public var minVersion: String
    /// The name to send as SNI and to verify the certificate against, when the URL holds an IP address
    /// or a different name.
    public var serverName: String?
    /// SHA-256 pins of acceptable server public keys (`sha256/<base64>`); empty means no pinning.
    public var pins: [String]
    /// Turns certificate and host name verification off. Development only; logged loudly.
    public var insecureSkipVerify: Bool

    enum CodingKeys: String, CodingKey {
        case caFile = "ca_file", certFile = "cert_file", keyFile = "key_file", minVersion = "min_version"
        case serverName = "server_name", pins, insecureSkipVerify = "insecure_skip_verify"
    }

    /// The defaults: system trust store, TLS 1.2+, verification on.
    public init() {
        minVersion = "1.2"
        pins = []
        insecureSkipVerify = false
    }

    /// Decodes the block.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        caFile = try container.decodeIfPresent(String.self, forKey: .caFile)
        certFile = try container.decodeIfPresent(String.self, forKey: .certFile)
        keyFile = try container.decodeIfPresent(String.self, forKey: .keyFile)
        minVersion = try container.decodeIfPresent(String.self, forKey: .minVersion) ?? "1.2"
        serverName = try container.decodeIfPresent(String.self, forKey: .serverName)
        pins = try container.decodeIfPresent([String].self, forKey: .pins) ?? []
        insecureSkipVerify = try container.decodeIfPresent(Bool.self, forKey: .insecureSkipVerify) ?? false
    }

    /// Offline checks; `keyPath` is where the block sits (e.g. `tls`). An adapter whose client library
    /// cannot honour `server_name` or `pins` says so here, as it leaves them out of
    /// ``NetworkOptions/tls(serverName:pins:)``.
    public func validate(keyPath: String = "tls", serverName allowsServerName: Bool = true,
                         pins allowsPins: Bool = true) throws(ConfigurationError) {
        if !allowsServerName, serverName != nil {
            throw ConfigurationError("this adapter verifies the URL's host; put that name in the URL", keyPath: "\(keyPath).server_name")
        }
        if !allowsPins, !pins.isEmpty {
            throw ConfigurationError("this adapter does not pin keys; trust a dedicated CA with ca_file instead", keyPath: "\(keyPath).pins")
        }
        for (key, file) in [("ca_file", caFile), ("cert_file", certFile), ("key_file", keyFile)] {
            if let file, !FileManager.default.isReadableFile(atPath: file) {
                throw ConfigurationError("cannot read \(file)", keyPath: "\(keyPath).\(key)")
            }
        }
        if (certFile == nil) != (keyFile == nil) {
            throw ConfigurationError("cert_file and key_file go together", keyPath: "\(keyPath).\(certFile == nil ? "cert_file" : "key_file")")
        }
        guard ["1.2", "1.3"].contains(minVersion) else {
            throw ConfigurationError("must be \"1.2\" or \"1.3\", found \"\(minVersion)\"", keyPath: "\(keyPath).min_version")
        }
        for (index, pin) in pins.enumerated() where SPKIPin(pin) == nil {
            throw ConfigurationError("\"\(pin)\" is not sha256/<base64 of 32 bytes>", keyPath: "\(keyPath).pins[\(index)]")
        }
        if insecureSkipVerify, !pins.isEmpty {
            throw ConfigurationError("pins need verification; remove insecure_skip_verify", keyPath: "\(keyPath).insecure_skip_verify")
        }
    }

    /// The NIOSSL client configuration these options describe.
    public func makeConfiguration() throws(ConfigurationError) -> TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.minimumTLSVersion = minVersion == "1.3" ? .tlsv13 : .tlsv12
        configuration.certificateVerification = insecureSkipVerify ? .none : .fullVerification
        do {
            if let caFile { configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(caFile)) }
            if let certFile, let keyFile {
                configuration.certificateChain = try NIOSSLCertificate.fromPEMFile(certFile).map { .certificate($0) }
                configuration.privateKey = .privateKey(try NIOSSLPrivateKey(file: keyFile, format: .pem))
            }
        } catch {
            throw ConfigurationError("cannot load TLS material: \(error)", keyPath: "tls")
        }
        return configuration
    }
}
