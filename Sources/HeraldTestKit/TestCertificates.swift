import Foundation

/// A throwaway PKI made with the `openssl` command: a CA, a server certificate for `localhost` and a
/// client certificate signed by it, and an unrelated second CA. For TLS tests against real servers.
public struct TestCertificates: Sendable {
    /// The trusted CA certificate (PEM).
    public let caFile: String
    /// An unrelated CA certificate, for "wrong CA" tests.
    public let otherCAFile: String
    /// The server certificate (SAN: DNS:localhost only).
    public let serverCertFile: String
    /// The server key.
    public let serverKeyFile: String
    /// The CA's private key (to sign more certificates in a test).
    public let caKeyFile: String
    /// A client certificate (CN=herald, extendedKeyUsage clientAuth) signed by the CA, for mutual TLS.
    public let clientCertFile: String
    /// The client key.
    public let clientKeyFile: String

    /// Generates everything in `directory`.
    public init(in directory: TemporaryDirectory) async throws {
        caFile = directory.path("ca.pem")
        otherCAFile = directory.path("other-ca.pem")
        serverCertFile = directory.path("server.pem")
        serverKeyFile = directory.path("server.key")
        caKeyFile = directory.path("ca.key")
        clientCertFile = directory.path("client.pem")
        clientKeyFile = directory.path("client.key")
        let clientExtensions = try directory.write("client.ext", "extendedKeyUsage=clientAuth\n")
        let csr = directory.path("server.csr")
        let extensions = try directory.write("server.ext", "subjectAltName=DNS:localhost\nextendedKeyUsage=serverAuth\n")
        let steps: [[String]] = [
            ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=Herald Test CA",
             "-keyout", directory.path("ca.key"), "-out", caFile],
            ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=Other CA",
             "-keyout", directory.path("other-ca.key"), "-out", otherCAFile],
            ["req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost", "-keyout", serverKeyFile, "-out", csr],
            ["x509", "-req", "-in", csr, "-CA", caFile, "-CAkey", directory.path("ca.key"), "-CAcreateserial",
             "-days", "2", "-extfile", extensions, "-out", serverCertFile],
            ["req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=herald", "-keyout", clientKeyFile, "-out", directory.path("client.csr")],
            ["x509", "-req", "-in", directory.path("client.csr"), "-CA", caFile, "-CAkey", directory.path("ca.key"), "-CAcreateserial",
             "-days", "2", "-extfile", clientExtensions, "-out", clientCertFile],
        ]
        for (index, arguments) in steps.enumerated() {
            let child = try ChildProcess(executable: "/usr/bin/openssl", arguments: arguments, logPath: directory.path("openssl-\(index).log"))
            guard try await child.waitForExit() == 0 else { throw TestKitError("openssl \(arguments[0]) failed: \(child.output)") }
        }
    }

    /// mosquitto listener settings serving this certificate with TLS 1.2 as the minimum.
    public var brokerListenerConfig: String {
        "cafile \(caFile)\ncertfile \(serverCertFile)\nkeyfile \(serverKeyFile)\ntls_version tlsv1.2\n"
    }
}
