import Crypto
import Foundation
import HeraldPluginAPI

/// Signs webhook requests the Standard Webhooks way: `webhook-signature: v1,<base64 HMAC-SHA256>` over
/// `<webhook-id>.<webhook-timestamp>.<body>`. A `whsec_`-prefixed secret is the base64 of the key;
/// any other secret is used as its UTF-8 bytes.
public struct WebhookSigner: Sendable {
    private let key: SymmetricKey

    /// Creates a signer; `nil` when a `whsec_` secret is not valid base64.
    public init?(secret: String) {
        if secret.hasPrefix("whsec_") {
            guard let data = Data(base64Encoded: String(secret.dropFirst(6))), !data.isEmpty else { return nil }
            key = SymmetricKey(data: data)
        } else {
            key = SymmetricKey(data: Data(secret.utf8))
        }
    }

    /// The `webhook-signature` header value.
    public func signature(id: String, timestamp: Int64, body: [UInt8]) -> String {
        var content = Data("\(id).\(timestamp).".utf8)
        content.append(contentsOf: body)
        let mac = HMAC<SHA256>.authenticationCode(for: content, using: key)
        return "v1," + Data(mac).base64EncodedString()
    }

    /// Whether a `webhook-signature` header (space-separated `v1,<sig>` values) matches, for receivers
    /// and tests.
    public func verify(header: String, id: String, timestamp: Int64, body: [UInt8]) -> Bool {
        let expected = signature(id: id, timestamp: timestamp, body: body)
        return header.split(separator: " ").contains { ConstantTime.equal($0.utf8, expected.utf8) }
    }
}
