import Foundation
public import HeraldPluginAPI

/// Request headers shared by the WebSocket handshake, REST polls and webhook posts: fixed `headers`
/// plus an optional bearer token from the config (use `${ENV_VAR}`) or from a file that is read again
/// on every connection, so a rotated token is picked up without a restart. Values are never logged.
public struct HTTPAuthOptions: Decodable, Sendable, Hashable {
    /// Extra headers, sent as they are; their values may be credentials, so they are kept as secrets.
    public var headers: [String: Secret]
    /// A token (use `${ENV_VAR}`), sent as `<token_header>: <token_scheme> <token>`.
    public var token: Secret?
    /// A file holding the token (trailing newline ignored), re-read on every connection.
    public var tokenFile: String?
    /// Header that carries the token; default `Authorization`.
    public var tokenHeader: String
    /// Prefix before the token; default `Bearer` (empty for none).
    public var tokenScheme: String

    enum CodingKeys: String, CodingKey {
        case headers, token, tokenFile = "token_file", tokenHeader = "token_header", tokenScheme = "token_scheme"
    }

    /// No headers.
    public init() {
        headers = [:]
        tokenHeader = "Authorization"
        tokenScheme = "Bearer"
    }

    /// Decodes the auth keys of a section (they sit directly in the section).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        headers = try container.decodeIfPresent([String: Secret].self, forKey: .headers) ?? [:]
        token = try container.decodeIfPresent(Secret.self, forKey: .token)
        tokenFile = try container.decodeIfPresent(String.self, forKey: .tokenFile)
        tokenHeader = try container.decodeIfPresent(String.self, forKey: .tokenHeader) ?? "Authorization"
        tokenScheme = try container.decodeIfPresent(String.self, forKey: .tokenScheme) ?? "Bearer"
    }

    /// Offline checks.
    public func validate() throws(ConfigurationError) {
        if token != nil, tokenFile != nil { throw ConfigurationError("set token or token_file, not both", keyPath: "token_file") }
        if let tokenFile, !FileManager.default.isReadableFile(atPath: tokenFile) {
            throw ConfigurationError("cannot read \(tokenFile)", keyPath: "token_file")
        }
        for name in headers.keys where name.isEmpty || name.contains(where: { $0 == ":" || $0 == " " || $0 == "\n" }) {
            throw ConfigurationError("\"\(name)\" is not a header name", keyPath: "headers.\(name)")
        }
    }

    /// The headers to send now (the token file is read at this moment).
    public func resolve() throws(HTTPAuthError) -> [(name: String, value: Secret)] {
        var resolved = headers.sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) }
        var secret = token?.value
        if let tokenFile {
            guard let text = try? String(contentsOfFile: tokenFile, encoding: .utf8) else { throw HTTPAuthError(file: tokenFile) }
            secret = text.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        if let secret, !secret.isEmpty {
            resolved.append((tokenHeader, Secret(tokenScheme.isEmpty ? secret : "\(tokenScheme) \(secret)")))
        }
        return resolved
    }
}

/// The token file could not be read.
public struct HTTPAuthError: Error, Sendable, CustomStringConvertible {
    /// The file.
    public var file: String
    /// A sentence for the log.
    public var description: String { "cannot read token file \(file)" }
}
