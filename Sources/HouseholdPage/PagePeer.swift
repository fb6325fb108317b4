#if canImport(Glibc)
import Glibc
#endif
import ControlAPI
import DNSWire
import Engine
import NIOCore
import PortDiagnostics

/// Who is at the other end of a connection to the household page (SPEC §9a, §11).
enum PagePeer: Sendable, Equatable {
    /// A device of the LAN: the page's device rules, by its address or MAC.
    case device
    /// A process on this machine, run by this uid: the control socket's rights for that uid.
    case localUser(CallerIdentity)
    /// A loopback connection whose socket the kernel's table does not show: refused.
    case unknownLocal

    /// Finds the process's uid the way `ss -tpe` does for a connection on this machine: the
    /// kernel's TCP tables (`/proc/net/tcp`, `tcp6`, proc(5)) list the client's own socket too,
    /// with the client as its local end, this listener as its remote end, and its owner's uid.
    /// The tables are readable by any user, so this works for a helper running as root with the
    /// unit's reduced capabilities and for one started by an ordinary user.
    ///
    /// A client on another machine has no row here, so it stays a `device`; that also covers a
    /// process reaching the page through this machine's own LAN address.
    static func of(remote: SocketAddress?, local: SocketAddress?, tables: [String] = ["/proc/net/tcp", "/proc/net/tcp6"]) -> PagePeer {
        guard let remote, let local, let peerAddress = bytes(remote), let ownAddress = bytes(local),
              let peerPort = remote.port, let ownPort = local.port
        else { return .device }
        let peer = ProcNetSocket.unmapped(peerAddress), own = ProcNetSocket.unmapped(ownAddress)
        for table in tables {
            // procfs reports size 0 and fills the file a page at a time: read to the end.
            guard let bytes = try? FileBytes.read(path: table) else { continue }
            for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
                guard let row = ProcNetSocket(line: line, transport: .tcp),
                      row.localPort == peerPort, row.remotePort == ownPort,
                      ProcNetSocket.unmapped(row.localAddress) == peer, ProcNetSocket.unmapped(row.remoteAddress) == own
                else { continue }
                return .localUser(CallerIdentity(uid: row.uid, gid: primaryGroup(of: row.uid), pid: 0))
            }
        }
        return isLoopback(peer) ? .unknownLocal : .device
    }

    /// Network-order bytes: 4 for IPv4, 16 for IPv6.
    static func bytes(_ address: SocketAddress) -> [UInt8]? {
        switch address {
        case .v4(let a): withUnsafeBytes(of: a.address.sin_addr) { Array($0) }
        case .v6(let a): withUnsafeBytes(of: a.address.sin6_addr) { Array($0) }
        default: nil
        }
    }

    /// 127/8 or ::1 (an IPv4-mapped address arrives here unmapped).
    static func isLoopback(_ address: [UInt8]) -> Bool {
        address.count == 4 ? address[0] == 127 : address == [UInt8](repeating: 0, count: 15) + [1]
    }

    /// The user's primary group from the password database (the table has no gid); a uid with
    /// no entry gets a gid no group has, so only its uid counts.
    static func primaryGroup(of uid: UInt32) -> UInt32 { SystemGroups.primaryGroup(ofUID: uid) ?? UInt32.max }
}
