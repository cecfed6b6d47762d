import Foundation
public import HeraldPluginAPI
import NetworkAdapterSupport

/// The `type: webhook` sink section: outputs POSTed as signed JSON (Standard Webhooks) to a URL per
/// output kind, delivered from the outbox at least once with a stable `webhook-id`.
public struct WebhookSinkConfiguration: SinkConfiguration, Decodable {
    /// URL per output kind (`notification`, `live_message`, `read_receipt`, `badge`); kinds without a URL
    /// are not queued for this sink.
    public var urls: [String: String]
    /// The signing secret (use `${ENV_VAR}`; `whsec_<base64>` or plain text).
    public var secret: Secret?
    /// A file holding the signing secret.
    public var secretFile: String?
    /// Delivery attempts per output before it is dead-lettered.
    public var maxAttempts: Int
    /// Seconds for one request.
    public var requestTimeoutSeconds: Double
    /// Recipients served at once (each recipient's outputs stay in order); 1 sends strictly one by one.
    public var concurrency: Int
    /// Headers and token sent with every request.
    public var auth: HTTPAuthOptions
    /// TLS settings for `https://` URLs.
    public var tls: TLSClientOptions

    enum CodingKeys: String, CodingKey {
        case urls, secret, secretFile = "secret_file", maxAttempts = "max_attempts", requestTimeoutSeconds = "request_timeout_s", tls
        case concurrency
    }

    /// Decodes the section.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        urls = try container.decode([String: String].self, forKey: .urls)
        secret = try container.decodeIfPresent(Secret.self, forKey: .secret)
        secretFile = try container.decodeIfPresent(String.self, forKey: .secretFile)
        maxAttempts = try container.decodeIfPresent(Int.self, forKey: .maxAttempts) ?? 10
        requestTimeoutSeconds = try container.decodeIfPresent(Double.self, forKey: .requestTimeoutSeconds) ?? 10
        concurrency = try container.decodeIfPresent(Int.self, forKey: .concurrency) ?? 8
        auth = try HTTPAuthOptions(from: decoder)
        tls = try container.decodeIfPresent(TLSClientOptions.self, forKey: .tls) ?? TLSClientOptions()
    }

    /// The signing secret, inline or from its file.
    var signingSecret: WebhookSecretSetting { WebhookSecretSetting(value: secret, file: secretFile, key: "secret") }

    /// Offline checks.
    public func validate() throws(ConfigurationError) {
        guard !urls.isEmpty else { throw ConfigurationError("name at least one output kind and its URL", keyPath: "urls") }
        for (kind, url) in urls.sorted(by: { $0.key < $1.key }) {
            guard OutputKind(rawValue: kind) != nil else {
                throw ConfigurationError("unknown output kind \"\(kind)\"; use \(OutputKind.allCases.map(\.rawValue).joined(separator: ", "))",
                                         keyPath: "urls.\(kind)")
            }
            guard let components = URLComponents(string: url), ["http", "https"].contains(components.scheme ?? ""),
                  components.host?.isEmpty == false else {
                throw ConfigurationError("\"\(url)\" is not an http:// or https:// URL", keyPath: "urls.\(kind)")
            }
        }
        try signingSecret.validate(required: true, why: "webhooks are signed: ")
        guard (1...1000).contains(maxAttempts) else { throw ConfigurationError("must be between 1 and 1000", keyPath: "max_attempts") }
        guard requestTimeoutSeconds > 0 else { throw ConfigurationError("must be > 0", keyPath: "request_timeout_s") }
        guard (1...256).contains(concurrency) else { throw ConfigurationError("must be between 1 and 256", keyPath: "concurrency") }
        try auth.validate()
        try tls.validate(serverName: false, pins: false)
    }

    /// Builds the sink (reads the secret file; does not connect).
    public func makeSink(name: String) throws(ConfigurationError) -> any SinkAdapter {
        guard let signer = try signingSecret.signer() else {
            throw ConfigurationError("webhooks are signed: set secret (use ${ENV_VAR}) or secret_file", keyPath: "secret")
        }
        var endpoints: [OutputKind: String] = [:]
        for (kind, url) in urls { if let kind = OutputKind(rawValue: kind) { endpoints[kind] = url } }
        return WebhookSink(name: name, endpoints: endpoints, signer: signer, configuration: self,
                           tlsConfiguration: try tls.makeConfiguration())
    }
}
