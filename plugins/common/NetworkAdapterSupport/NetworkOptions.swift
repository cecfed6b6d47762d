public import HeraldPluginAPI

/// Option descriptions of the blocks shared by the HTTP-based adapters, for `herald adapters`, the JSON
/// Schema and the READMEs.
public enum NetworkOptions {
    /// The `tls` block (``TLSClientOptions``) with every key.
    public static let tls = tls()

    /// The `tls` block; adapters whose library cannot honour `server_name` or `pins` leave them out (and
    /// reject them in `validate()`).
    public static func tls(serverName: Bool = true, pins: Bool = true) -> AdapterOption {
        var keys = [
            AdapterOption("ca_file", .string, "PEM file of trusted CAs (default: the system store)"),
            AdapterOption("cert_file", .string, "Client certificate chain, PEM (mutual TLS)"),
            AdapterOption("key_file", .string, "Client private key, PEM"),
            AdapterOption("min_version", .choice(["1.2", "1.3"]), default: "\"1.2\"", "Lowest TLS version accepted"),
        ]
        if serverName {
            keys.append(AdapterOption("server_name", .string, "Name for SNI and certificate verification when the URL holds an IP address"))
        }
        if pins { keys.append(AdapterOption("pins", .strings, "Accepted server public keys, sha256/<base64> of the SPKI")) }
        keys.append(AdapterOption("insecure_skip_verify", .boolean, default: "false", "Turn verification off (development only)"))
        return AdapterOption("tls", .object(keys), "TLS settings; verification on and TLS 1.2 minimum by default")
    }

    /// The header and token keys (``HTTPAuthOptions``).
    public static let auth: [AdapterOption] = [
        AdapterOption("headers", .stringMap, "Extra request headers (values may use ${ENV_VAR}); never logged"),
        AdapterOption("token", .string, "Token (use ${ENV_VAR}), sent as <token_header>: <token_scheme> <token>"),
        AdapterOption("token_file", .string, "File holding the token, re-read on every connection (rotation)"),
        AdapterOption("token_header", .string, default: "Authorization", "Header carrying the token"),
        AdapterOption("token_scheme", .string, default: "Bearer", "Prefix before the token (\"\" for none)"),
    ]
}
