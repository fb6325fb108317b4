import Hummingbird
import NIOCore
import Sinkhole

/// The request context of the household page: Hummingbird's core storage and the address of the
/// device asking, which decides its profile exactly as for its DNS queries (SPEC §9a).
struct WebContext: RequestContext, RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    let remoteAddress: SocketAddress?
    /// The page's own end of the connection: with `remoteAddress`, the 4-tuple `PagePeer` looks up.
    let localAddress: SocketAddress?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
        localAddress = source.channel.localAddress
    }

    /// A device of the LAN or a user of this machine (`PagePeer`): read when a device's action is
    /// checked, so a request that needs no check reads no table.
    func peer() -> PagePeer { PagePeer.of(remote: remoteAddress, local: localAddress) }

    /// Forms are small; a larger body is refused before it is read whole.
    var maxUploadSize: Int { 16 * 1024 }

    /// The device as the sinkhole sees it (`ClientAddress` from the socket's peer).
    var client: ClientAddress { ClientAddress(remoteAddress) }
}
