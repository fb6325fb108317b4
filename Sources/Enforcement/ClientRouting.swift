import DNSWire
import Sinkhole

/// A querying address as the engine routes it (SPEC §9 "per-client profiles"): the sinkhole's own
/// `ClientAddress`, so a query's address needs no conversion on its way to the rules.
public typealias ClientIP = ClientAddress

extension ClientAddress: CustomStringConvertible {
    /// Parses a numeric address, IPv4 or IPv6 (an embedded dotted quad included), as written in a
    /// configuration file or on the command line.
    public init?(_ text: String) {
        if let v4 = IPv4Address(text) {
            self = .v4(v4.rawValue)
        } else if text.contains(":"), let v6 = Self.parseV6(text) {
            self = .v6(high: v6.high, low: v6.low)
        } else {
            return nil
        }
    }

    /// RFC 4291 §2.2 form 3 (`::ffff:10.5.1.1`) is rewritten to hex groups for `IPv6Address`,
    /// the IPv4 tail read by `IPv4Address`, so both halves go through the same strict parsers.
    private static func parseV6(_ text: String) -> IPv6Address? {
        guard let colon = text.lastIndex(of: ":"), text[colon...].contains(".") else { return IPv6Address(text) }
        guard let tail = IPv4Address(String(text[text.index(after: colon)...])) else { return nil }
        let hex = String(tail.rawValue >> 16, radix: 16) + ":" + String(tail.rawValue & 0xFFFF, radix: 16)
        return IPv6Address(String(text[...colon]) + hex)
    }

    public var description: String {
        switch self {
        case .v4(let a):
            return "\(a >> 24).\(a >> 16 & 0xFF).\(a >> 8 & 0xFF).\(a & 0xFF)"
        case .v6(let high, let low):
            let groups = (0..<4).map { String(high >> (48 - 16 * $0) & 0xFFFF, radix: 16) }
                + (0..<4).map { String(low >> (48 - 16 * $0) & 0xFFFF, radix: 16) }
            return groups.joined(separator: ":")
        case .unknown:
            return "unknown"
        }
    }
}

/// Why a profile's client text is not an address or network; the text says what to write instead.
public struct ClientNetworkError: Error, Hashable, Sendable, CustomStringConvertible {
    public let description: String

    static func invalid(_ text: String) -> ClientNetworkError { ClientNetworkError(description: text) }
}

/// A client network written in a profile (`10.0.0.0/8`, `fd00::/8`, or a single address).
public struct ClientNetwork: Hashable, Sendable, CustomStringConvertible {
    public let address: ClientIP
    public let prefixLength: Int

    /// - Throws: `ClientNetworkError` naming the text and the form expected.
    public init(parsing text: String) throws(ClientNetworkError) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2, let address = ClientIP(String(parts[0])) else {
            throw .invalid("“\(text)” is not an address or network; write it like 192.168.1.0/24 or fd00::/8.")
        }
        let maxLength = if case .v4 = address { 32 } else { 128 }
        var length = maxLength
        if parts.count == 2 {
            // Digits only: Int("+24") would pass a sign the way the old address parser passed "+1".
            guard !parts[1].isEmpty, parts[1].utf8.allSatisfy({ $0 &- 0x30 < 10 }), let l = Int(parts[1]),
                  (0...maxLength).contains(l) else {
                throw .invalid("“\(text)”: the prefix length must be 0…\(maxLength).")
            }
            length = l
        }
        // An IPv4-mapped network (`::ffff:10.0.0.5`, `::ffff:10.0.0.0/120`) is the IPv4 network it
        // stands for: the router places a mapped client by its IPv4 address, so kept as IPv6 it
        // would match nobody, and written next to `10.0.0.5` it would be one client claimed twice
        // under two spellings.
        if case .v6(let high, let low) = address, high == 0, low >> 32 == 0xFFFF, length >= 96 {
            self.address = .v4(UInt32(truncatingIfNeeded: low))
            prefixLength = length - 96
            return
        }
        self.address = address
        prefixLength = length
    }

    public var description: String { "\(address)/\(prefixLength)" }
}

/// Where a query's client goes (`ClientRouter.route(for:)`).
public enum ClientRoute: Hashable, Sendable {
    /// The client's one profile.
    case profile(Int)
    /// A device on a local link whose MAC is not known yet: it may be in any profile that names a
    /// MAC, or in the profile its address gives (the associated index).
    case unresolved(Int)

    /// The profile the address gives when unresolved; for what is shown, never for an answer.
    @inlinable public var profile: Int {
        switch self {
        case .profile(let p), .unresolved(let p): p
        }
    }
}

/// The client → profile table (SPEC §9): longest prefix wins, IPv4 and IPv6 kept apart, anything
/// unmatched goes to the default profile 0. Rules are sorted longest prefix first once, so a lookup
/// is a scan that stops at the first hit and allocates nothing.
public struct ClientRouter: Sendable {
    struct V4Rule: Sendable { var network: UInt32; var mask: UInt32; var profile: Int }
    struct V6Rule: Sendable { var high: UInt64; var low: UInt64; var maskHigh: UInt64; var maskLow: UInt64; var profile: Int }

    private let v4: ContiguousArray<V4Rule>
    private let v6: ContiguousArray<V6Rule>
    /// MAC → profile index (SPEC §9); empty when no profile names a MAC, and then the neighbour
    /// table is never consulted.
    @usableFromInline let macs: [UInt64: Int]
    @usableFromInline let neighbours: NeighbourCache?
    @usableFromInline let macProfileIndices: ContiguousArray<Int>
    /// Where a client no rule claims goes (`unknown_devices`): the default profile, 0, unless the
    /// configuration names another.
    private let unknownProfile: Int

    /// - Parameters:
    ///   - networks: per profile index, the networks it claims.
    ///   - macs: per profile index, the MAC addresses it claims; they win over networks, since a
    ///     MAC follows the device whatever address it takes.
    ///   - unknownProfile: the index clients no rule claims follow.
    public init(networks: [[ClientNetwork]], macs: [[UInt64]] = [], neighbours: NeighbourCache? = nil, unknownProfile: Int = 0) {
        var table: [UInt64: Int] = [:]
        for (profile, list) in macs.enumerated() {
            for mac in list where table[mac] == nil { table[mac] = profile }
        }
        self.macs = table
        macProfileIndices = ContiguousArray(Set(table.values).sorted())
        self.neighbours = neighbours
        self.unknownProfile = unknownProfile
        var v4: [(Int, V4Rule)] = []
        var v6: [(Int, V6Rule)] = []
        for (profile, list) in networks.enumerated() {
            for n in list {
                switch n.address {
                case .v4(let a):
                    let mask: UInt32 = n.prefixLength == 0 ? 0 : ~UInt32(0) << UInt32(32 - n.prefixLength)
                    v4.append((n.prefixLength, V4Rule(network: a & mask, mask: mask, profile: profile)))
                case .v6(let high, let low):
                    let mh: UInt64 = n.prefixLength == 0 ? 0 : (n.prefixLength >= 64 ? ~0 : ~UInt64(0) << UInt64(64 - n.prefixLength))
                    let ml: UInt64 = n.prefixLength <= 64 ? 0 : (n.prefixLength == 128 ? ~0 : ~UInt64(0) << UInt64(128 - n.prefixLength))
                    v6.append((n.prefixLength, V6Rule(high: high & mh, low: low & ml, maskHigh: mh, maskLow: ml, profile: profile)))
                case .unknown:
                    continue
                }
            }
        }
        // Stable sort: equal prefixes keep profile order, so a network claimed twice goes to the first profile.
        self.v4 = ContiguousArray(v4.enumerated().sorted { ($0.element.0, -$0.offset) > ($1.element.0, -$1.offset) }.map(\.element.1))
        self.v6 = ContiguousArray(v6.enumerated().sorted { ($0.element.0, -$0.offset) > ($1.element.0, -$1.offset) }.map(\.element.1))
    }

    /// The profile index of `client`: by its MAC when a profile names it, else by longest prefix,
    /// else the unknown devices' profile (0, the default, unless configured). A device whose MAC
    /// cannot be told yet gets the profile its address alone would give; the DNS path asks
    /// `route(for:)` instead, which says so.
    @inlinable public func profile(for client: ClientIP) -> Int {
        route(for: client).profile
    }

    /// Where `client`'s queries go. `.unresolved` when profiles name MACs and the client is a
    /// device on a local link whose MAC the kernel does not know yet (its first query from a new
    /// address, or a flood that spent the read budget): it may be any of the MAC profiles' devices,
    /// so the DNS path answers by the strictest of them and the address's own profile (SPEC §11
    /// "New addresses": never open).
    @inlinable public func route(for client: ClientIP) -> ClientRoute {
        guard hasMACs, let neighbours else { return .profile(addressProfile(client)) }
        switch neighbours.lookup(client) {
        case .mac(let mac):
            if let byMAC = macs[mac] { return .profile(byMAC) }
            return .profile(addressProfile(client))
        case .notANeighbour:
            return .profile(addressProfile(client))
        case .unresolved:
            return .unresolved(addressProfile(client))
        }
    }

    /// Every profile that names a MAC, in profile order: the profiles an unresolved device may be in.
    public var macProfiles: ContiguousArray<Int> { macProfileIndices }

    @usableFromInline var hasMACs: Bool { !macs.isEmpty }

    /// By address alone: longest prefix, else the unknown devices' profile.
    @usableFromInline func addressProfile(_ client: ClientIP) -> Int {
        switch client {
        case .v4(let a): return v4Profile(a) ?? fallback(client)
        case .v6(let high, let low): return v6Profile(high, low) ?? fallback(client)
        case .unknown: return fallback(client)
        }
    }

    /// Loopback is the machine itself (its own processes in DNS mode), never an unknown device.
    @usableFromInline func fallback(_ client: ClientIP) -> Int {
        unknownProfile == 0 || NeighbourCache.isLoopbackOrUnknown(NeighbourCache.normalized(client)) ? 0 : unknownProfile
    }

    // Index loops rather than `for rule in rules where …`: the iterator form allocates per call
    // in unoptimized builds, and this runs for every query.
    @usableFromInline func v4Profile(_ a: UInt32) -> Int? {
        var i = 0
        while i < v4.count {
            if a & v4[i].mask == v4[i].network { return v4[i].profile }
            i += 1
        }
        return nil
    }

    @usableFromInline func v6Profile(_ high: UInt64, _ low: UInt64) -> Int? {
        // An IPv4-mapped address (::ffff:a.b.c.d) is the IPv4 client it stands for.
        if high == 0, low >> 32 == 0xFFFF { return v4Profile(UInt32(truncatingIfNeeded: low)) }
        var i = 0
        while i < v6.count {
            if high & v6[i].maskHigh == v6[i].high && low & v6[i].maskLow == v6[i].low { return v6[i].profile }
            i += 1
        }
        return nil
    }
}

/// Address-range arithmetic for checking what a change of networks moves (`ProfileWeakening`),
/// not used on the query path.
extension ClientNetwork {
    /// The network's masks: a v4 mask in the low 32 bits of `low`, or the two v6 halves.
    private var masks: (high: UInt64, low: UInt64) {
        switch address {
        case .v4:
            return (0, prefixLength == 0 ? 0 : UInt64(~UInt32(0) << UInt32(32 - prefixLength)))
        case .v6:
            let high: UInt64 = prefixLength == 0 ? 0 : (prefixLength >= 64 ? ~0 : ~UInt64(0) << UInt64(64 - prefixLength))
            let low: UInt64 = prefixLength <= 64 ? 0 : (prefixLength == 128 ? ~0 : ~UInt64(0) << UInt64(128 - prefixLength))
            return (high, low)
        case .unknown:
            return (0, 0)
        }
    }

    /// The network's first address: the written one with its host bits cleared (`10.0.0.5/24` → `10.0.0.0`).
    package var first: ClientIP {
        let m = masks
        switch address {
        case .v4(let a): return .v4(a & UInt32(truncatingIfNeeded: m.low))
        case .v6(let high, let low): return .v6(high: high & m.high, low: low & m.low)
        case .unknown: return .unknown
        }
    }

    /// The address right after the network's last one; nil when the network ends the address space.
    package var afterLast: ClientIP? {
        let m = masks
        switch first {
        case .v4(let a):
            let (next, overflow) = (a | ~UInt32(truncatingIfNeeded: m.low)).addingReportingOverflow(1)
            return overflow ? nil : .v4(next)
        case .v6(let high, let low):
            let (nextLow, carry) = (low | ~m.low).addingReportingOverflow(1)
            guard carry else { return .v6(high: high | ~m.high, low: nextLow) }
            let (nextHigh, overflow) = (high | ~m.high).addingReportingOverflow(1)
            return overflow ? nil : .v6(high: nextHigh, low: 0)
        case .unknown:
            return nil
        }
    }

    /// Whether `ip` lies in the network (same address family).
    package func contains(_ ip: ClientIP) -> Bool {
        let m = masks
        switch (first, ip) {
        case (.v4(let base), .v4(let a)): return a & UInt32(truncatingIfNeeded: m.low) == base
        case (.v6(let bh, let bl), .v6(let h, let l)): return h & m.high == bh && l & m.low == bl
        default: return false
        }
    }

    /// Whether `other` lies wholly inside this network and is smaller than it.
    package func strictlyContains(_ other: ClientNetwork) -> Bool {
        other.prefixLength > prefixLength && contains(other.first)
    }

    /// The same network as `other`, however each was written (`10.0.0.5/24` is `10.0.0.0/24`).
    package func sameNetwork(as other: ClientNetwork) -> Bool {
        prefixLength == other.prefixLength && first == other.first
    }
}

/// Where the clients of two profiles overlap, and which profile wins there (nested
/// networks were accepted silently). Said by `scrolloff profile list`, `scrolloff-dns check-config`
/// and the log at start. Follows `ClientRouter`'s rules: a MAC wins over every network, then the
/// longest prefix, then, for one network in two profiles, the first in profile order.
public enum ClientOverlaps {
    /// One sentence per overlap, numbers first.
    /// - Parameter profiles: names and clients in the engine's order (the default profile first,
    ///   then by name), the order that breaks a tie.
    public static func describe(_ profiles: [(name: String, clients: [String])]) -> [String] {
        var networks: [(profile: String, network: ClientNetwork)] = []
        var macOwners: [String] = []
        var byMAC: [UInt64: [String]] = [:]
        for p in profiles {
            for text in p.clients {
                if let mac = MACAddress.parse(text) {
                    if !macOwners.contains(p.name) { macOwners.append(p.name) }
                    if !(byMAC[mac]?.contains(p.name) ?? false) { byMAC[mac, default: []].append(p.name) }
                } else if let network = try? ClientNetwork(parsing: text) {
                    networks.append((p.name, network))
                }
            }
        }
        var lines: [String] = []
        for (i, outer) in networks.enumerated() {
            for (j, inner) in networks.enumerated() where inner.profile != outer.profile {
                if outer.network.strictlyContains(inner.network) {
                    lines.append("\(inner.network) (profile \(inner.profile)) lies inside \(outer.network) (profile \(outer.profile)): "
                        + "clients in \(inner.network) follow \(inner.profile), since the longer prefix wins")
                } else if j > i, outer.network.sameNetwork(as: inner.network) {
                    lines.append("\(outer.network) is a client of profiles \(outer.profile) and \(inner.profile): "
                        + "it follows \(outer.profile), the first in order; remove it from one of them")
                }
            }
        }
        for (mac, owners) in byMAC.sorted(by: { $0.key < $1.key }) where owners.count > 1 {
            lines.append("\(MACAddress.describe(mac)) is a client of profiles \(owners.joined(separator: " and ")): "
                + "it follows \(owners[0]), the first in order; remove it from the others")
        }
        if !macOwners.isEmpty, !networks.isEmpty {
            lines.append("a device named by its MAC (profile \(macOwners.joined(separator: ", "))) follows that profile "
                + "whatever address it takes, even inside another profile's network")
        }
        return lines
    }
}
