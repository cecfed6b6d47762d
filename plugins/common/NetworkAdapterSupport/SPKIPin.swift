import Crypto
import Foundation
public import NIOSSL

/// A SHA-256 pin of a server's public key (its DER SubjectPublicKeyInfo), written `sha256/<base64>`
/// as in HPKP and curl's `--pinnedpubkey`.
public struct SPKIPin: Sendable, Hashable, CustomStringConvertible {
    /// The 32-byte digest.
    public let digest: [UInt8]

    /// Parses `sha256/<base64>`; `nil` if malformed.
    public init?(_ text: String) {
        guard text.hasPrefix("sha256/"), let data = Data(base64Encoded: String(text.dropFirst(7))), data.count == 32 else { return nil }
        digest = [UInt8](data)
    }

    /// The pin of a certificate's public key.
    public init(certificate: NIOSSLCertificate) throws {
        let spki = try certificate.extractPublicKey().toSPKIBytes()
        digest = Array(SHA256.hash(data: spki))
    }

    /// `sha256/<base64>`.
    public var description: String { "sha256/" + Data(digest).base64EncodedString() }
}
