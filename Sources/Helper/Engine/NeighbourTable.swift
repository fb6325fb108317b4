#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization

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
    static func read() -> [ClientIP: UInt64]? {
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
                if type == rtmNewNeigh, length >= 28 { entry(buffer, from: offset, length: length, into: &table) }
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

/// Address → MAC for the DNS path (SPEC §9: a device that changes its IP stays in its profile).
///
/// The DNS path never waits on a full refresh: a known address answers from the cached map, and
/// a map older than `maximumAge` is read again on a background thread. Only an address the map
/// does not know (a device that just changed its IP) reads the table at once, because its first
/// query must already follow its MAC's profile; those reads are one netlink dump each (tens of
/// microseconds for a household's table) and come from a token bucket of `missReadsPerSecond`
/// (that many at once, then that many a second), so a flood from spoofed addresses costs at most
/// that many reads a second. Loopback clients are never looked up.
public final class NeighbourCache: Sendable {
    struct State {
        var map: [ClientIP: UInt64] = [:]
        var readAt: ContinuousClock.Instant?
        var tokens: Double
        var tokensAt: ContinuousClock.Instant
        var refreshing = false
    }

    private let state: Mutex<State>
    private let reader: @Sendable () -> [ClientIP: UInt64]?
    let maximumAge: Duration
    let missReadsPerSecond: Double

    public convenience init(maximumAge: Duration = .seconds(10), missReadsPerSecond: Int = 10) {
        self.init(maximumAge: maximumAge, missReadsPerSecond: missReadsPerSecond, reader: { NeighbourDump.read() })
    }

    /// With a reader of its own (tests); the public one reads the kernel's table.
    public init(maximumAge: Duration, missReadsPerSecond: Int, reader: @escaping @Sendable () -> [ClientIP: UInt64]?) {
        self.maximumAge = maximumAge
        self.missReadsPerSecond = Double(max(1, missReadsPerSecond))
        self.reader = reader
        state = Mutex(State(tokens: Double(max(1, missReadsPerSecond)), tokensAt: .now))
    }

    /// The MAC the kernel knows for `client`, or nil (not on a local link, loopback, or unknown).
    public func mac(for client: ClientIP) -> UInt64? {
        let client = Self.normalized(client)
        if Self.isLoopbackOrUnknown(client) { return nil }
        let now = ContinuousClock.now
        let rate = missReadsPerSecond
        let (found, refresh, readNow) = state.withLock { s -> (UInt64?, Bool, Bool) in
            let found = s.map[client]
            let stale = s.readAt.map { now - $0 > maximumAge } ?? true
            var readNow = false
            if found == nil {
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
            return (found, refresh, readNow)
        }
        if refresh { refreshInBackground() }
        if let found { return found }
        guard readNow, let map = reader() else { return nil }
        state.withLock { s in
            s.map = map
            s.readAt = now
        }
        return map[client]
    }

    /// The whole table read now (the cached one when the kernel cannot be read), off the DNS path:
    /// for checking what a configuration change would move.
    public func currentTable() -> [ClientIP: UInt64] {
        if let map = reader() {
            state.withLock { s in
                s.map = map
                s.readAt = .now
            }
            return map
        }
        return state.withLock { $0.map }
    }

    private func refreshInBackground() {
        Thread.detachNewThread { [self] in
            let map = reader()
            state.withLock { s in
                if let map {
                    s.map = map
                    s.readAt = .now
                }
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
