import Foundation
public import NIOSSL

/// One-line reasons for connection failures, for the logs of the HTTP-based adapters.
public enum TLSFailureDescription {
    /// Describes `error` from a connection to `url`. A failed certificate verification is explained
    /// (expired, not yet valid, untrusted issuer) from a second, unverified look at the certificate.
    public static func describe(_ error: any Error, url: String, options: TLSClientOptions,
                                configuration: TLSConfiguration) async -> String {
        guard error is NIOSSLError || error is NIOSSLExtraError || error is BoringSSLError else { return String(describing: error) }
        let text = String(describing: error)
        let secure = url.hasPrefix("wss:") || url.hasPrefix("https:")
        guard text.contains("CERTIFICATE_VERIFY_FAILED"), let components = URLComponents(string: url), let host = components.host,
              let reason = await SPKIPinProbe.explainVerificationFailure(host: host, port: components.port ?? (secure ? 443 : 80),
                                                                          serverName: options.serverName,
                                                                          configuration: configuration) else {
            return "TLS: \(text)"
        }
        let trust = options.caFile.map { "CA file \($0)" } ?? "the system trust store"
        return "TLS: certificate verification failed: \(reason) (trusting \(trust))"
    }
}
