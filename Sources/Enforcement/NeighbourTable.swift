#if canImport(Glibc)
import Glibc
#endif
import Foundation
import NIOConcurrencyHelpers

/// A 48-bit hardware address in a profile's `clients` (SPEC §9: "clients matched by IP/CIDR or MAC
/// address"), kept as the low 48 bits of a `UInt64`.
public enum MACAddress {
    /// `aa:bb:cc:dd:ee:ff` or `aa-bb-cc-dd-ee-ff`, any case; nil for anything else.
    public static func parse(_ text: String) -> UInt64? {
        let groups = text.split(separator: text.contains("-") ? "-" : ":", omittingEmptySubsequences: false)
        guard groups.count == 6 else { return nil }
        var value: UInt64 = 0
        for g in groups {
            guard g.utf8.count == 2, let byte = UInt8(g, radix: 16) else { return nil }
            value = value << 8 | UInt64(byte)
        }
        return value
    }

    /// `aa:bb:cc:dd:ee:ff`.
    public static func describe(_ value: UInt64) -> String {
        (0..<6).map { i in
            let byte = UInt8(truncatingIfNeeded: value >> (40 - 8 * UInt64(i)))
            return (byte < 16 ? "0" : "") + String(byte, radix: 16)
        }.joined(separator: ":")
    }
}

/// The kernel's neighbour table (ARP for IPv4, NDP for IPv6) read with one rtnetlink dump
/// (`RTM_GETNEIGH`, rtnetlink(7)): every address with a usable link-layer address.
enum NeighbourDump {
    // From <linux/netlink.h> and <linux/rtnetlink.h>, <linux/neighbour.h>; Glibc does not export them.
    private static let netlinkRoute: Int32 = 0
    private static let rtmNewNeigh: UInt16 = 28
    private static let rtmGetNeigh: UInt16 = 30
    private static let nlmsgError: UInt16 = 2
    private static let nlmsgDone: UInt16 = 3
    private static let flagsRequestDump: UInt16 = 0x0001 | 0x0300
    private static let ndaDst: UInt16 = 1
    private static let ndaLinkLayerAddress: UInt16 = 2
    /// NUD_REACHABLE | NUD_STALE | NUD_DELAY | NUD_PROBE | NUD_PERMANENT: states whose address was
    /// seen; INCOMPLETE and FAILED have none worth trusting.
    private static let usableStates: UInt16 = 0x02 | 0x04 | 0x08 | 0x10 | 0x80

    /// Nil when the table cannot be read (no netlink in this sandbox); the caller keeps its old map.
    /// - Parameter limit: the most entries kept; the rest of a huge table is read and dropped, so a
    ///   kernel table filled by spoofed addresses costs no more memory here than this many.
    static func read(limit: Int = .max) -> [ClientIP: UInt64]? {
        let fd = socket(AF_NETLINK, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), netlinkRoute)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        // A dump answers at once; the timeout only bounds a kernel that would not.
        var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        // struct nlmsghdr (16 bytes) + struct ndmsg (12 bytes), family AF_UNSPEC: IPv4 and IPv6.
        var request = [UInt8](repeating: 0, count: 28)
        store(UInt32(28), into: &request, at: 0)
        store(rtmGetNeigh, into: &request, at: 4)
        store(flagsRequestDump, into: &request, at: 6)
        store(UInt32(1), into: &request, at: 8)
        guard send(fd, request, request.count, 0) == request.count else { return nil }
        var table: [ClientIP: UInt64] = [:]
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { return nil }
            var offset = 0
            while offset + 16 <= n {
                let length = Int(load(UInt32.self, buffer, offset))
                let type = load(UInt16.self, buffer, offset + 4)
                guard length >= 16, offset + length <= n else { return nil }
                if type == nlmsgDone { return table }
                if type == nlmsgError { return nil }
                if type == rtmNewNeigh, length >= 28, table.count < limit { entry(buffer, from: offset, length: length, into: &table) }
                offset += (length + 3) & ~3
            }
        }
    }

    private static func entry(_ b: [UInt8], from start: Int, length: Int, into table: inout [ClientIP: UInt64]) {
        let state = load(UInt16.self, b, start + 24)
        guard state & usableStates != 0 else { return }
        var address: ClientIP?
        var mac: UInt64?
        var a = start + 28
        while a + 4 <= start + length {
            let attributeLength = Int(load(UInt16.self, b, a)), attributeType = load(UInt16.self, b, a + 2)
            guard attributeLength >= 4, a + attributeLength <= start + length else { return }
            let payload = Array(b[(a + 4)..<(a + attributeLength)])
            if attributeType == ndaDst {
                if payload.count == 4 {
                    address = .v4(payload.reduce(0) { $0 << 8 | UInt32($1) })
                } else if payload.count == 16 {
                    address = .v6(high: payload[0..<8].reduce(0) { $0 << 8 | UInt64($1) }, low: payload[8..<16].reduce(0) { $0 << 8 | UInt64($1) })
                }
            } else if attributeType == ndaLinkLayerAddress, payload.count == 6 {
                mac = payload.reduce(0) { $0 << 8 | UInt64($1) }
            }
            a += (attributeLength + 3) & ~3
        }
        if let address, let mac, mac != 0 { table[address] = mac }
    }

    private static func store<T: FixedWidthInteger>(_ value: T, into bytes: inout [UInt8], at offset: Int) {
        withUnsafeBytes(of: value.littleEndian) { for (i, byte) in $0.enumerated() { bytes[offset + i] = byte } }
    }

    private static func load<T: FixedWidthInteger>(_ type: T.Type, _ bytes: [UInt8], _ offset: Int) -> T {
        bytes.withUnsafeBytes { T(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: T.self)) }
    }
}

/// The addresses on this machine's links that have neighbours (ARP or NDP), read with
/// getifaddrs(3): which clients can have a MAC at all, and which addresses are the machine's own.
struct LocalLinks: Sendable, Equatable {
    /// The networks of interfaces that are up and resolve neighbours: not loopback, not a
    /// point-to-point link or a tunnel (`IFF_NOARP`: WireGuard, tun), whose peers have no MAC.
    var networks: [ClientNetwork]
    /// This machine's own addresses: its own queries to a LAN address come from one of them and
    /// never have a neighbour entry, like loopback.
    var own: Set<ClientIP>

    init(networks: [ClientNetwork], own: Set<ClientIP> = []) {
        self.networks = networks
        self.own = own
    }

    /// Whether `client` is a device on one of this machine's links, whose MAC the kernel can learn.
    func isNeighbour(_ client: ClientIP) -> Bool {
        guard !own.contains(client) else { return false }
        var i = 0
        while i < networks.count {
            if networks[i].contains(client) { return true }
            i += 1
        }
        return false
    }

    // From <net/if.h>.
    private static let up: UInt32 = 0x1, loopback: UInt32 = 0x8, pointToPoint: UInt32 = 0x10, noARP: UInt32 = 0x80

    /// Nil when the interfaces cannot be listed.
    static func read() -> LocalLinks? {
        var first: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&first) == 0 else { return nil }
        defer { freeifaddrs(first) }
        var links = LocalLinks(networks: [])
        var cursor = first
        while let entry = cursor?.pointee {
            cursor = entry.ifa_next
            guard let address = entry.ifa_addr.flatMap(Self.address) else { continue }
            links.own.insert(address)
            let flags = entry.ifa_flags
            guard flags & up != 0, flags & (loopback | pointToPoint | noARP) == 0,
                  let mask = entry.ifa_netmask.flatMap(Self.prefixLength) else { continue }
            let text = "\(address)/\(mask)"
            if let network = try? ClientNetwork(parsing: text), !links.networks.contains(network) { links.networks.append(network) }
        }
        return links
    }

    private static func address(_ sa: UnsafeMutablePointer<sockaddr>) -> ClientIP? {
        let raw = UnsafeRawPointer(sa)
        switch Int32(sa.pointee.sa_family) {
        case AF_INET:
            return .v4(UInt32(bigEndian: raw.loadUnaligned(as: sockaddr_in.self).sin_addr.s_addr))
        case AF_INET6:
            var high: UInt64 = 0, low: UInt64 = 0
            withUnsafeBytes(of: raw.loadUnaligned(as: sockaddr_in6.self).sin6_addr) { bytes in
                for i in 0..<8 { high = high << 8 | UInt64(bytes[i]) }
                for i in 8..<16 { low = low << 8 | UInt64(bytes[i]) }
            }
            return NeighbourCache.normalized(.v6(high: high, low: low))
        default:
            return nil
        }
    }

    /// The number of leading one bits of a netmask (contiguous masks only, as the kernel keeps them).
    private static func prefixLength(_ sa: UnsafeMutablePointer<sockaddr>) -> Int? {
        switch address(sa) {
        case .v4(let m)?: return (~m).leadingZeroBitCount
        case .v6(let high, let low)?: return high == ~0 ? 64 + (~low).leadingZeroBitCount : (~high).leadingZeroBitCount
        default: return nil
        }
    }
}

/// What the neighbour cache can say about a querying address.
public enum NeighbourLookup: Hashable, Sendable {
    /// The kernel knows the device's MAC.
    case mac(UInt64)
    /// Not a device on a link of this machine (loopback, the machine's own address, a client behind
    /// another router or on a tunnel): it has no MAC to know, so only its address can place it.
    case notANeighbour
    /// A device on a local link whose MAC the kernel does not know yet (a new address whose first
    /// query came before any ARP or NDP exchange), or whose lookup the budget of reads did not allow
    /// (a flood of new addresses). Its MAC is unknown *for now*: SPEC §11 "New addresses".
    case unresolved
}

/// Address → MAC for the DNS path (SPEC §9: a device that changes its IP stays in its profile).
///
/// The DNS path never waits on a full refresh: a known address answers from the cached map, and
/// a map older than `maximumAge` is read again on a background thread. Only an address the map
/// does not know that lies on one of this machine's links reads the table at once, because its
/// first query must already follow its MAC's profile; those reads are one netlink dump each (tens
/// of microseconds for a household's table) and come from a token bucket of `missReadsPerSecond`
/// (that many at once, then that many a second), so a flood from spoofed addresses costs at most
/// that many reads a second. A new address often has no entry yet even then (the device still had
/// this machine's MAC cached, so no ARP or NDP exchange came first); the kernel makes one when the
/// reply goes out, so it is `unresolved` for the first query only, and the router answers that one
/// by the strictest profile that could apply (`ClientRouter.route(for:)`). Loopback and the
/// machine's own addresses are never looked up; nor are clients off this machine's links.
///
/// Memory is bounded whatever the kernel's table holds: the map keeps at most `maximumEntries`
/// (addresses past it are `unresolved`, never open), and nothing waits per address.
public final class NeighbourCache: Sendable {
    struct State {
        var map: [ClientIP: UInt64] = [:]
        /// Nil until the interfaces were listed once: every non-loopback client counts as a neighbour.
        var links: LocalLinks?
        var readAt: ContinuousClock.Instant?
        var tokens: Double
        var tokensAt: ContinuousClock.Instant
        var refreshing = false
    }

    /// The most addresses the map keeps (a household's table holds tens; the kernel's own default
    /// limit, gc_thresh3, is 1,024 per family).
    public static let defaultMaximumEntries = 8192

    private let state: NIOLockedValueBox<State>
    private let reader: @Sendable () -> [ClientIP: UInt64]?
    private let linkReader: @Sendable () -> LocalLinks?
    let maximumAge: Duration
    let missReadsPerSecond: Double
    let maximumEntries: Int

    public convenience init(maximumAge: Duration = .seconds(10), missReadsPerSecond: Int = 10) {
        self.init(maximumAge: maximumAge, missReadsPerSecond: missReadsPerSecond, maximumEntries: Self.defaultMaximumEntries,
                  reader: { NeighbourDump.read(limit: Self.defaultMaximumEntries) }, linkReader: { LocalLinks.read() })
    }

    /// With a reader of its own (tests); the public one reads the kernel's table. Every
    /// non-loopback address counts as a device on a local link.
    public convenience init(maximumAge: Duration, missReadsPerSecond: Int, maximumEntries: Int = NeighbourCache.defaultMaximumEntries,
                            reader: @escaping @Sendable () -> [ClientIP: UInt64]?) {
        self.init(maximumAge: maximumAge, missReadsPerSecond: missReadsPerSecond, maximumEntries: maximumEntries, reader: reader,
                  linkReader: { nil })
    }

    init(maximumAge: Duration, missReadsPerSecond: Int, maximumEntries: Int, reader: @escaping @Sendable () -> [ClientIP: UInt64]?,
         linkReader: @escaping @Sendable () -> LocalLinks?) {
        self.maximumAge = maximumAge
        self.missReadsPerSecond = Double(max(1, missReadsPerSecond))
        self.maximumEntries = max(0, maximumEntries)
        self.reader = reader
        self.linkReader = linkReader
        state = NIOLockedValueBox(State(tokens: Double(max(1, missReadsPerSecond)), tokensAt: .now))
    }

    /// The MAC the kernel knows for `client`, or nil (not on a local link, loopback, or unknown).
    public func mac(for client: ClientIP) -> UInt64? {
        if case .mac(let mac) = lookup(client) { return mac }
        return nil
    }

    /// What is known of `client`'s MAC now; reads the kernel's table at once (within the budget)
    /// for a neighbour the map does not know.
    public func lookup(_ client: ClientIP) -> NeighbourLookup {
        let client = Self.normalized(client)
        if Self.isLoopbackOrUnknown(client) { return .notANeighbour }
        let now = ContinuousClock.now
        let rate = missReadsPerSecond
        let (known, refresh, readNow) = state.withLockedValue { s -> (NeighbourLookup?, Bool, Bool) in
            var known: NeighbourLookup?
            if let mac = s.map[client] {
                known = .mac(mac)
            } else if let links = s.links, !links.isNeighbour(client) {
                // No table read can place it: no token spent, no read.
                known = .notANeighbour
            }
            let stale = s.readAt.map { now - $0 > maximumAge } ?? true
            var readNow = false
            if known == nil {
                let elapsed = now - s.tokensAt
                let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                s.tokens = min(rate, s.tokens + seconds * rate)
                s.tokensAt = now
                if s.tokens >= 1 {
                    s.tokens -= 1
                    readNow = true
                }
            }
            var refresh = false
            if stale, !readNow, !s.refreshing {
                s.refreshing = true
                refresh = true
            }
            return (known, refresh, readNow)
        }
        if refresh { refreshInBackground() }
        if let known { return known }
        // Out of budget: not known *yet*, which the router answers strictly, never openly.
        guard readNow else { return .unresolved }
        let links = linkReader()
        let map = reader().map(bounded)
        let (mac, placed) = state.withLockedValue { s -> (UInt64?, LocalLinks?) in
            if let links { s.links = links }
            if let map {
                s.map = map
                s.readAt = now
            }
            return (s.map[client], s.links)
        }
        if let mac { return .mac(mac) }
        if let placed, !placed.isNeighbour(client) { return .notANeighbour }
        return .unresolved
    }

    /// The whole table read now (the cached one when the kernel cannot be read), off the DNS path:
    /// for checking what a configuration change would move.
    public func currentTable() -> [ClientIP: UInt64] {
        if let map = reader().map(bounded) {
            let links = linkReader()
            state.withLockedValue { s in
                s.map = map
                if let links { s.links = links }
                s.readAt = .now
            }
            return map
        }
        return state.withLockedValue { $0.map }
    }

    /// At most `maximumEntries` of a table: what a dump returns beyond them stays unresolved.
    private func bounded(_ map: [ClientIP: UInt64]) -> [ClientIP: UInt64] {
        guard map.count > maximumEntries else { return map }
        var kept: [ClientIP: UInt64] = [:]
        kept.reserveCapacity(maximumEntries)
        for (address, mac) in map {
            if kept.count == maximumEntries { break }
            kept[address] = mac
        }
        return kept
    }

    /// How many addresses the map holds now (for tests of its bound).
    public var count: Int { state.withLockedValue { $0.map.count } }

    private func refreshInBackground() {
        Thread.detachNewThread { [self] in
            let links = linkReader()
            let map = reader().map(bounded)
            state.withLockedValue { s in
                if let map {
                    s.map = map
                    s.readAt = .now
                }
                if let links { s.links = links }
                s.refreshing = false
            }
        }
    }

    /// An IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) is the IPv4 client it stands for.
    static func normalized(_ client: ClientIP) -> ClientIP {
        if case .v6(let high, let low) = client, high == 0, low >> 32 == 0xFFFF { return .v4(UInt32(truncatingIfNeeded: low)) }
        return client
    }

    static func isLoopbackOrUnknown(_ client: ClientIP) -> Bool {
        switch client {
        case .v4(let a): a >> 24 == 127
        case .v6(let high, let low): high == 0 && low == 1
        case .unknown: true
        }
    }
}
