import HeraldPluginAPI
import NetworkAdapterSupport

/// Decides whether a request may post events: a bearer token from the accepted list (several, so they
/// can be rotated), or a Standard Webhooks signature (`webhook-id`, `webhook-timestamp`,
/// `webhook-signature`) made with the configured secret, so one Herald's webhook sink can feed another.
/// Tokens are compared in constant time and never logged.
struct RequestAuthenticator: Sendable {
    let tokens: [Secret]
    let signer: WebhookSigner?
    let toleranceMilliseconds: Int64

    /// Whether any credential is configured; without one (loopback only) every request is let in.
    var isRequired: Bool { !tokens.isEmpty || signer != nil }

    /// The headers a decision reads.
    struct Credentials: Sendable {
        var authorization: String?
        var webhookID: String?
        var webhookTimestamp: String?
        var webhookSignature: String?

        /// Whether the request carries a signature to check against its body.
        var isSigned: Bool { webhookSignature != nil }
    }

    /// Why a request was refused, for the log and the count (never the token itself).
    enum Failure: String, Error, Sendable {
        case missing = "no bearer token or webhook signature"
        case wrongToken = "wrong bearer token"
        case unsigned = "webhook signature headers incomplete"
        case stale = "webhook-timestamp outside the tolerance"
        case badSignature = "webhook signature does not match"
    }

    /// Checks a bearer token; `nil` when the request carries none.
    func checkToken(_ credentials: Credentials) -> Result<Void, Failure>? {
        guard let header = credentials.authorization, header.lowercased().hasPrefix("bearer ") else { return nil }
        let presented = Array(header.dropFirst(7).utf8)
        // Every token is compared, whatever matched, so the time taken says nothing about which did.
        var matched = false
        for token in tokens where ConstantTime.equal(presented, token.value.utf8) { matched = true }
        return matched ? .success(()) : .failure(.wrongToken)
    }

    /// Checks a Standard Webhooks signature over `body` at `now`.
    func checkSignature(_ credentials: Credentials, body: [UInt8], now: Timestamp) -> Result<Void, Failure> {
        guard let signer else { return .failure(.missing) }
        guard let id = credentials.webhookID, let stamp = credentials.webhookTimestamp.flatMap({ Int64($0) }),
              let signature = credentials.webhookSignature else { return .failure(.unsigned) }
        guard abs(now.milliseconds - stamp * 1000) <= toleranceMilliseconds else { return .failure(.stale) }
        return signer.verify(header: signature, id: id, timestamp: stamp, body: body) ? .success(()) : .failure(.badSignature)
    }
}
