import Hummingbird
import NIOCore

/// The request context of the HTTP source: Hummingbird's core context plus the client's address, for
/// provenance and logs. The body limit is the source's own (`max_body_bytes`), enforced when collecting.
struct IngestRequestContext: RequestContext, RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    /// The connected client.
    let remoteAddress: SocketAddress?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }

    /// The source collects bodies itself with its own limit.
    var maxUploadSize: Int { .max }
}
