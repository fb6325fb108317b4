#if canImport(Glibc)
import Glibc
#endif
import DNSWire

/// One socket line of `/proc/net/udp`, `udp6`, `tcp` or `tcp6` (proc(5)): which local address and
/// port it holds, its state, its owner's uid and its inode (the key to the process that holds it).
///
/// Used only when a listener cannot bind, to say who holds the port instead of "address in use".
public struct ProcNetSocket: Sendable, Equatable {
    public var transport: DNSTransport
    /// The local address in network byte order: 4 bytes, or 16 for the `*6` tables.
    public var localAddress: [UInt8]
    public var localPort: Int
    /// The peer's address (all zeros for a listener) and port: with the local ones, the 4-tuple
    /// that tells which process's socket is the other end of a loopback connection.
    public var remoteAddress: [UInt8]
    public var remotePort: Int
    /// The kernel's socket state (`st`): 0x0A is TCP LISTEN, 0x07 an unconnected UDP socket.
    public var state: UInt8
    public var uid: UInt32
    public var inode: UInt64

    static let tcpListen: UInt8 = 0x0A

    /// Parses one line; nil for the header and for lines that do not have the proc(5) shape.
    ///
    /// The kernel prints each 32-bit word of the address with `%08X` as the machine stores it, so
    /// on a little-endian host `0100007F` is 127.0.0.1; ports are printed in host order already.
    /// - Parameter littleEndian: the byte order of the machine that wrote the line.
    public init?(line: some StringProtocol, transport: DNSTransport, littleEndian: Bool = ProcNetSocket.hostIsLittleEndian) {
        let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard fields.count >= 10, fields[0].hasSuffix(":") else { return nil }
        let local = fields[1].split(separator: ":")
        let remote = fields[2].split(separator: ":")
        guard local.count == 2, let port = Int(local[1], radix: 16),
              let address = Self.decodeAddress(local[0], littleEndian: littleEndian),
              remote.count == 2, let peerPort = Int(remote[1], radix: 16),
              let peerAddress = Self.decodeAddress(remote[0], littleEndian: littleEndian),
              let state = UInt8(fields[3], radix: 16),
              let uid = UInt32(fields[7]),
              let inode = UInt64(fields[9])
        else { return nil }
        self.transport = transport
        localAddress = address
        localPort = port
        remoteAddress = peerAddress
        remotePort = peerPort
        self.state = state
        self.uid = uid
        self.inode = inode
    }

    public static var hostIsLittleEndian: Bool { UInt16(1).littleEndian == 1 }

    static func decodeAddress(_ hex: some StringProtocol, littleEndian: Bool) -> [UInt8]? {
        guard hex.count == 8 || hex.count == 32 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(hex.count / 2)
        var index = hex.startIndex
        while index < hex.endIndex {
            let end = hex.index(index, offsetBy: 8)
            guard let word = UInt32(hex[index..<end], radix: 16) else { return nil }
            let big = [UInt8(word >> 24), UInt8(word >> 16 & 0xFF), UInt8(word >> 8 & 0xFF), UInt8(word & 0xFF)]
            bytes += littleEndian ? big.reversed() : big
            index = end
        }
        return bytes
    }

    /// Whether this socket keeps a listener on `address`:`port` (4 or 16 bytes) from binding.
    ///
    /// TCP counts only listening sockets; UDP counts every bound one. An unspecified address on
    /// either side clashes with everything of its family, and `::` also with IPv4 (Linux binds
    /// dual-stack unless IPV6_V6ONLY, which /proc does not show, so the clash is assumed).
    public func blocks(address: [UInt8], port: Int) -> Bool {
        guard port == localPort, transport == .udp || state == Self.tcpListen else { return false }
        let mine = Self.unmapped(localAddress)
        let theirs = Self.unmapped(address)
        if mine == theirs { return true }
        if mine.count == theirs.count { return Self.isUnspecified(mine) || Self.isUnspecified(theirs) }
        // One IPv4, one IPv6: only a dual-stack wildcard reaches across.
        return (mine.count == 16 && Self.isUnspecified(mine)) || (theirs.count == 16 && Self.isUnspecified(theirs))
    }

    /// An IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) as its IPv4 bytes.
    public static func unmapped(_ address: [UInt8]) -> [UInt8] {
        guard address.count == 16, address[0..<10].allSatisfy({ $0 == 0 }), address[10] == 0xFF, address[11] == 0xFF else {
            return address
        }
        return Array(address[12..<16])
    }

    static func isUnspecified(_ address: [UInt8]) -> Bool { address.allSatisfy { $0 == 0 } }

    /// The local address as text (`127.0.0.53`, `::1`).
    public var addressText: String { Self.text(of: localAddress) }

    /// The address and port as a listener is written (`127.0.0.53:53`, `[::1]:53`).
    public var endpointText: String {
        localAddress.count == 16 ? "[\(addressText)]:\(localPort)" : "\(addressText):\(localPort)"
    }

    static func text(of address: [UInt8]) -> String {
        let family = address.count == 16 ? AF_INET6 : AF_INET
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let ok = address.withUnsafeBytes { raw in inet_ntop(family, raw.baseAddress, &buffer, socklen_t(buffer.count)) != nil }
        guard ok else { return address.map { String($0) }.joined(separator: ".") }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The bytes of a literal IPv4 or IPv6 address (`127.0.0.1`, `::1`), nil for anything else.
    public static func bytes(ofAddress text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
        return nil
    }
}
