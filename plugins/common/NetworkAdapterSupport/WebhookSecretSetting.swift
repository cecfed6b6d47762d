import Foundation
public import HeraldPluginAPI

/// A Standard Webhooks secret given in the config (`KEY`, use `${ENV_VAR}`) or in a file (`KEY_file`):
/// the webhook sink signs with it, the HTTP source checks signatures with it. One place checks the
/// pair offline and reads it into a ``WebhookSigner``.
public struct WebhookSecretSetting: Sendable, Hashable {
    /// The secret as written in the config.
    public var value: Secret?
    /// A file holding the secret.
    public var file: String?
    /// The config key of the inline value; the file's key is `KEY_file`.
    public let key: String

    /// Describes the pair under `key`.
    public init(value: Secret?, file: String?, key: String) {
        self.value = value
        self.file = file
        self.key = key
    }

    /// Whether either is set.
    public var isSet: Bool { value != nil || file != nil }

    /// Offline checks: not both, a `whsec_` value is base64, the file is readable; `required` demands one.
    public func validate(required: Bool, why: String = "") throws(ConfigurationError) {
        switch (value, file) {
        case (nil, nil) where required:
            throw ConfigurationError("\(why)set \(key) (use ${ENV_VAR}) or \(key)_file", keyPath: key)
        case (.some, .some): throw ConfigurationError("set \(key) or \(key)_file, not both", keyPath: "\(key)_file")
        case (let secret?, nil) where WebhookSigner(secret: secret.value) == nil:
            throw ConfigurationError("a whsec_ secret must be base64 after the prefix", keyPath: key)
        case (nil, let file?) where !FileManager.default.isReadableFile(atPath: file):
            throw ConfigurationError("cannot read \(file)", keyPath: "\(key)_file")
        default: break
        }
    }

    /// The signer for the secret (reading the file), or `nil` when neither is set.
    public func signer() throws(ConfigurationError) -> WebhookSigner? {
        var text = value?.value
        if let file {
            guard let contents = try? String(contentsOfFile: file, encoding: .utf8) else {
                throw ConfigurationError("cannot read \(file)", keyPath: "\(key)_file")
            }
            text = contents.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        guard let text else { return nil }
        guard let signer = WebhookSigner(secret: text) else {
            throw ConfigurationError("the secret is not usable", keyPath: file == nil ? key : "\(key)_file")
        }
        return signer
    }
}
