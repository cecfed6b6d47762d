import Foundation
public import NIOCore
import NIOPosix
import NIOTLS
public import NIOSSL
import Synchronization

/// Short TLS connections made beside the real ones: key pinning (the HTTP and WebSocket libraries
/// take only a `TLSConfiguration`, so adapters probe before each connection they open and refuse to go
/// on when the key is not pinned) and explaining a failed certificate verification in words.
public enum SPKIPinProbe {
    /// Connects to `host:port`, verifies as `configuration` says, and checks the leaf key against `pins`.
    /// - Throws: ``PinMismatch`` when the key is not pinned, or the connection/handshake error.
    public static func verify(host: String, port: Int, serverName: String?, configuration: TLSConfiguration,
                              pins: [SPKIPin], timeout: TimeAmount = .seconds(10)) async throws {
        let leaf = try await peerCertificate(host: host, port: port, serverName: serverName, configuration: configuration, timeout: timeout)
        let presented = try SPKIPin(certificate: leaf)
        guard pins.contains(presented) else { throw PinMismatch(presented: presented.description) }
    }

    /// Why verification of `host:port` failed, when the certificate's dates say so: connects once more
    /// without verification and reads the leaf's validity. `nil` when the dates are fine (then the
    /// certificate is not signed by a trusted CA).
    public static func explainVerificationFailure(host: String, port: Int, serverName: String?, configuration: TLSConfiguration,
                                                  now: Date = Date()) async -> String? {
        var relaxed = configuration
        relaxed.certificateVerification = .none
        guard let leaf = try? await peerCertificate(host: host, port: port, serverName: serverName, configuration: relaxed) else {
            return nil
        }
        let formatter = ISO8601DateFormatter()
        let notAfter = Date(timeIntervalSince1970: TimeInterval(leaf.notValidAfter))
        let notBefore = Date(timeIntervalSince1970: TimeInterval(leaf.notValidBefore))
        if notAfter < now { return "the server certificate expired at \(formatter.string(from: notAfter))" }
        if notBefore > now { return "the server certificate is not valid before \(formatter.string(from: notBefore))" }
        return "the server certificate is not signed by a trusted CA"
    }

    /// Completes a handshake with `configuration` and returns the server's leaf certificate.
    static func peerCertificate(host: String, port: Int, serverName: String?, configuration: TLSConfiguration,
                                timeout: TimeAmount = .seconds(10)) async throws -> NIOSSLCertificate {
        let context = try NIOSSLContext(configuration: configuration)
        let group = MultiThreadedEventLoopGroup.singleton
        let handshake = HandshakeOutcome(promise: group.any().makePromise(of: Void.self))
        let bootstrap = ClientBootstrap(group: group)
            .connectTimeout(timeout)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let tls = try NIOSSLClientHandler(context: context, serverHostname: serverName ?? (isIPAddress(host) ? nil : host))
                    try channel.pipeline.syncOperations.addHandler(tls)
                    try channel.pipeline.syncOperations.addHandler(HandshakeWatcher(outcome: handshake))
                }
            }
        let channel: any Channel
        do {
            channel = try await bootstrap.connect(host: host, port: port).get()
        } catch {
            // No connection, so no handshake: the promise is completed all the same (NIO traps on a leaked one).
            handshake.complete(.failure(error))
            throw error
        }
        defer { channel.close(promise: nil) }
        let timer = channel.eventLoop.scheduleTask(in: timeout) { channel.close(promise: nil) }
        defer { timer.cancel() }
        try await handshake.promise.futureResult.get()
        guard let leaf = try await channel.nioSSL_peerCertificate().get() else { throw PinMismatch(presented: "no certificate") }
        return leaf
    }

    static func isIPAddress(_ host: String) -> Bool {
        (try? SocketAddress(ipAddress: host, port: 0)) != nil
    }
}

/// The server's key matches none of the configured pins.
public struct PinMismatch: Error, Sendable, CustomStringConvertible {
    /// The pin of the key the server presented.
    public var presented: String
    /// A sentence for the log.
    public var description: String { "server public key \(presented) matches no configured pin" }
}

/// The outcome of a probe's TLS handshake: its promise, completed once by whichever comes first.
private final class HandshakeOutcome: Sendable {
    let promise: EventLoopPromise<Void>
    private let completed = Mutex(false)

    init(promise: EventLoopPromise<Void>) { self.promise = promise }

    func complete(_ result: Result<Void, any Error>) {
        guard completed.withLock({ done in defer { done = true }; return !done }) else { return }
        promise.completeWith(result)
    }
}

/// Completes the handshake's outcome when the TLS handshake finishes or fails, or the connection closes.
private final class HandshakeWatcher: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    let outcome: HandshakeOutcome

    init(outcome: HandshakeOutcome) { self.outcome = outcome }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? TLSUserEvent, case .handshakeCompleted = event { outcome.complete(.success(())) }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        outcome.complete(.failure(error))
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        outcome.complete(.failure(ChannelError.inputClosed))
        context.fireChannelInactive()
    }
}
