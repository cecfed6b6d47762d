import Hummingbird
import NIOCore

/// The admin API's request context: Hummingbird's core context plus the client's address, which the
/// token check uses to hold back a client that keeps presenting wrong tokens.
struct AdminRequestContext: RequestContext, RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    /// The connected client.
    let remoteAddress: SocketAddress?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}
