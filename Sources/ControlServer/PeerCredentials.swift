#if canImport(Glibc)
import Glibc
#endif
import ControlAPI
import NIOCore

/// Reads the credentials of the process at the other end of a Unix socket (SO_PEERCRED, unix(7)).
///
/// The kernel records them when the client calls `connect`, so the client cannot forge them; they
/// decide which profiles a caller may act on (SPEC §11). NIO knows no typed option for `ucred`,
/// so this goes through its `SocketOptionProvider` escape hatch, which calls `getsockopt` on the
/// accepted descriptor with the full `struct ucred` size. (The `ChannelOptions.socketOption`
/// path would pass a 4-byte buffer and the kernel would return only the pid.)
enum PeerCredentials {
    static func read(from channel: any Channel) -> EventLoopFuture<CallerIdentity> {
        guard let provider = channel as? any SocketOptionProvider else {
            return channel.eventLoop.makeFailedFuture(PeerCredentialsError.unsupportedChannel)
        }
        // `struct ucred { pid_t pid; uid_t uid; gid_t gid; }` (unix(7)); Glibc's module does not
        // export it (it needs _GNU_SOURCE), so read it as three contiguous 32-bit words.
        let future: EventLoopFuture<(UInt32, UInt32, UInt32)> = provider.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED)
        )
        return future.map { CallerIdentity(uid: $0.1, gid: $0.2, pid: Int32(bitPattern: $0.0)) }
    }
}

enum PeerCredentialsError: Error, CustomStringConvertible {
    case unsupportedChannel
    var description: String { "the control channel cannot report its peer's credentials (SO_PEERCRED)" }
}
