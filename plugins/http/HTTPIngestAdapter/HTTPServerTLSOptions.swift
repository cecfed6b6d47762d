import Foundation
public import HeraldPluginAPI
public import NIOSSL

/// The `tls:` block of the HTTP source: the listener's certificate and key, TLS 1.2 or newer, and
/// optionally the CA that client certificates must chain to (mutual TLS: a client without one is refused
/// during the handshake).
public struct HTTPServerTLSOptions: Decodable, Sendable, Hashable {
    /// The server certificate chain (PEM).
    public var certFile: String
    /// The server's private key (PEM).
    public var keyFile: String
    /// CA certificates (PEM) that client certificates must chain to; unset: no client certificate asked.
    public var clientCAFile: String?
    /// Lowest accepted protocol version: `"1.2"` (default) or `"1.3"`.
    public var minVersion: String

    enum CodingKeys: String, CodingKey {
        case certFile = "cert_file", keyFile = "key_file", clientCAFile = "client_ca_file", minVersion = "min_version"
    }

    /// Decodes the block.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        certFile = try container.decode(String.self, forKey: .certFile)
        keyFile = try container.decode(String.self, forKey: .keyFile)
        clientCAFile = try container.decodeIfPresent(String.self, forKey: .clientCAFile)
        minVersion = try container.decodeIfPresent(String.self, forKey: .minVersion) ?? "1.2"
    }

    /// Offline checks: the files are readable and the version is known.
    public func validate() throws(ConfigurationError) {
        for (key, file) in [("cert_file", certFile), ("key_file", keyFile), ("client_ca_file", clientCAFile)] {
            if let file, !FileManager.default.isReadableFile(atPath: file) {
                throw ConfigurationError("cannot read \(file)", keyPath: "tls.\(key)")
            }
        }
        guard ["1.2", "1.3"].contains(minVersion) else {
            throw ConfigurationError("must be \"1.2\" or \"1.3\", found \"\(minVersion)\"", keyPath: "tls.min_version")
        }
    }

    /// The NIOSSL server configuration these options describe.
    public func makeConfiguration() throws(ConfigurationError) -> TLSConfiguration {
        do {
            let chain = try NIOSSLCertificate.fromPEMFile(certFile).map { NIOSSLCertificateSource.certificate($0) }
            let key = try NIOSSLPrivateKey(file: keyFile, format: .pem)
            var configuration = TLSConfiguration.makeServerConfiguration(certificateChain: chain, privateKey: .privateKey(key))
            configuration.minimumTLSVersion = minVersion == "1.3" ? .tlsv13 : .tlsv12
            if let clientCAFile {
                configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(clientCAFile))
                configuration.certificateVerification = .noHostnameVerification
            }
            return configuration
        } catch {
            throw ConfigurationError("cannot load TLS material: \(error)", keyPath: "tls")
        }
    }
}
