#if canImport(Glibc)
import Glibc
#endif

/// Which addresses a member's http(s) source may connect to: not this machine (its
/// loopback, its own interface addresses: the metrics endpoint, the household page), not the
/// networks behind it (private, shared, link-local, unique local), not unspecified, multicast
/// or reserved addresses, unless `[lists] allow_private_hosts` names them.
///
/// It is asked for every socket libcurl opens (`CURLOPT_OPENSOCKETFUNCTION`), with the address
/// libcurl is about to connect to: a host that resolved to a public address when the list was
/// added and to 127.0.0.1 at the refresh (DNS rebinding), and every redirect hop, are checked on
/// the address actually used, not on a name resolved earlier.
struct AddressRule: Sendable {
    let allowed: [AddressNetwork]
    /// This machine's interface addresses, read once per transfer.
    let own: [[UInt8]]

    init(allowed: [AddressNetwork]) {
        self.allowed = allowed
        own = Self.interfaceAddresses()
    }

    init(allowed: [AddressNetwork], own: [[UInt8]]) {
        self.allowed = allowed
        self.own = own
    }

    /// Why `address` (4 or 16 bytes) may not be connected to; nil when it may.
    func refusal(of address: [UInt8]) -> String? {
        if allowed.contains(where: { $0.contains(address) }) { return nil }
        let plain = IPAddressBytes.unmapped(address)
        // The kind first: "a loopback address" says more than "this machine's own" for ::1.
        if let kind = Self.kind(of: plain) { return kind }
        return own.contains(where: { IPAddressBytes.unmapped($0) == plain }) ? "one of this machine's own addresses" : nil
    }

    /// The kind of a non-public address, or nil for a public one.
    static func kind(of address: [UInt8]) -> String? {
        let a = address
        if a.count == 4 {
            switch (a[0], a[1]) {
            case (0, _): return "an unspecified address (0.0.0.0/8)"
            case (127, _): return "a loopback address"
            case (10, _), (172, 16...31), (192, 168): return "a private address (RFC 1918)"
            case (100, 64...127): return "a shared address (100.64.0.0/10)"
            case (169, 254): return "a link-local address"
            case (224...239, _): return "a multicast address"
            case (240...255, _): return "a reserved or broadcast address"
            case (192, 0) where a[2] == 0: return "a reserved address (192.0.0.0/24)"
            default: return nil
            }
        }
        guard a.count == 16 else { return "not an IP address" }
        if a.allSatisfy({ $0 == 0 }) { return "the unspecified address (::)" }
        if a[0..<15].allSatisfy({ $0 == 0 }), a[15] == 1 { return "a loopback address" }
        // ::a.b.c.d (deprecated IPv4-compatible) and NAT64's 64:ff9b::/96 carry an IPv4 address.
        if a[0..<12].allSatisfy({ $0 == 0 }) { return kind(of: Array(a[12..<16])) ?? "an IPv4-compatible address" }
        if a[0] == 0x00, a[1] == 0x64, a[2] == 0xFF, a[3] == 0x9B, a[4..<12].allSatisfy({ $0 == 0 }) { return kind(of: Array(a[12..<16])) }
        if a[0] == 0xFF { return "a multicast address" }
        if a[0] == 0xFE, a[1] & 0xC0 == 0x80 { return "a link-local address" }
        if a[0] == 0xFE, a[1] & 0xC0 == 0xC0 { return "a site-local address" }
        if a[0] & 0xFE == 0xFC { return "a unique local address (fc00::/7)" }
        return nil
    }

    /// Every address of this machine's interfaces (getifaddrs).
    static func interfaceAddresses() -> [[UInt8]] {
        var head: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&head) == 0 else { return [] }
        defer { freeifaddrs(head) }
        var out: [[UInt8]] = []
        var next = head
        while let entry = next {
            if let address = entry.pointee.ifa_addr, let bytes = Self.bytes(of: UnsafeRawPointer(address)) { out.append(bytes) }
            next = entry.pointee.ifa_next
        }
        return out
    }

    /// The address of a `sockaddr_in` or `sockaddr_in6`; nil for other families.
    static func bytes(of sockaddr: UnsafeRawPointer) -> [UInt8]? {
        let family = Int32(sockaddr.load(as: sa_family_t.self))
        if family == AF_INET {
            var address = sockaddr.loadUnaligned(as: sockaddr_in.self).sin_addr
            return withUnsafeBytes(of: &address) { Array($0) }
        }
        if family == AF_INET6 {
            var address = sockaddr.loadUnaligned(as: sockaddr_in6.self).sin6_addr
            return withUnsafeBytes(of: &address) { Array($0) }
        }
        return nil
    }
}
