#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ControlAPI

/// Reading the system resolver's configuration for `doctor` (SPEC §11: "the system resolver points
/// at the sinkhole"). Pure text in, addresses out; the CLI reads the files.
public enum ResolverSetup {
    /// glibc reads at most this many `nameserver` lines and ignores the rest (resolv.conf(5), MAXNS).
    public static let maximumNameServers = 3

    /// The addresses systemd-resolved's stub listeners answer on (systemd-resolved.service(8)):
    /// 127.0.0.53 is the stub, 127.0.0.54 the proxy stub. Both forward to resolved's own servers.
    public static let resolvedStubs: Set<String> = ["127.0.0.53", "127.0.0.54"]

    /// The `nameserver` lines of a resolv.conf, in order, on port 53 (the format has no port).
    /// A zone suffix (`fe80::1%eth0`) is dropped; a line that is not an address is skipped.
    /// - Parameter limit: glibc's 3 for /etc/resolv.conf; nil for resolved's own list, which
    ///   resolved reads whole.
    public static func nameServers(resolvConf text: String, limit: Int? = maximumNameServers) -> [NameServer] {
        var servers: [NameServer] = []
        for line in text.split(whereSeparator: \.isNewline) {
            // glibc matches the keyword at the very start of the line; an indented line is ignored.
            guard line.first == "n" else { continue }
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count >= 2, fields[0] == "nameserver" else { continue }
            let host = String(fields[1].split(separator: "%", maxSplits: 1)[0])
            guard let canonical = canonicalAddress(host) else { continue }
            servers.append(NameServer(host: canonical))
            if let limit, servers.count == limit { break }
        }
        return servers
    }

    /// The servers in `resolvectl dns` output, every link and the global ones, deduplicated:
    /// ```
    /// Global: 127.0.0.1
    /// Link 2 (eth0): 192.168.1.1 fe80::1%2 9.9.9.9#dns.quad9.net [::1]:5300
    /// ```
    /// systemd writes `ADDR[:PORT][%IFINDEX][#SERVER_NAME]`, with brackets around IPv6 when a port
    /// follows (resolved.conf(5), `DNS=`).
    public static func nameServers(resolvectlOutput text: String) -> [NameServer] {
        var servers: [NameServer] = []
        for line in text.split(whereSeparator: \.isNewline) {
            guard let colon = line.range(of: ": ") else { continue }
            for token in line[colon.upperBound...].split(separator: " ") {
                if let server = parseSystemdServer(String(token)), !servers.contains(server) { servers.append(server) }
            }
        }
        return servers
    }

    /// One systemd DNS server token; nil when it is not an address.
    static func parseSystemdServer(_ token: String) -> NameServer? {
        var text = Substring(token.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0])
        var port = 53
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            let rest = text[text.index(after: close)...]
            text = text[text.index(after: text.startIndex)..<close]
            if rest.hasPrefix(":") {
                guard let value = Int(rest.dropFirst()), (1...65535).contains(value) else { return nil }
                port = value
            }
        } else if text.filter({ $0 == ":" }).count == 1, let colon = text.firstIndex(of: ":") {
            guard let value = Int(text[text.index(after: colon)...]), (1...65535).contains(value) else { return nil }
            port = value
            text = text[..<colon]
        }
        let host = String(text.split(separator: "%", maxSplits: 1).first ?? "")
        guard let canonical = canonicalAddress(host) else { return nil }
        return NameServer(host: canonical, port: port)
    }

    /// The address in the kernel's own text form (`::1` for `0:0::1`), or nil when `text` is no
    /// literal address; so that addresses compare equal however they were written.
    public static func canonicalAddress(_ text: String) -> String? {
        if text.contains(":") {
            var address = in6_addr()
            guard inet_pton(AF_INET6, text, &address) == 1 else { return nil }
            var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
            guard inet_ntop(AF_INET6, &address, &buffer, socklen_t(buffer.count)) != nil else { return nil }
            return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        var address = in_addr()
        guard inet_pton(AF_INET, text, &address) == 1 else { return nil }
        var buffer = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
        guard inet_ntop(AF_INET, &address, &buffer, socklen_t(buffer.count)) != nil else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func isLoopback(_ host: String) -> Bool { DoctorListener.isLoopback(host) }
    static func isWildcard(_ host: String) -> Bool { host == "0.0.0.0" || host == "::" }
}

/// How one server the resolver asks relates to the sinkhole's listeners.
public enum ServerMatch: Equatable, Sendable {
    /// It is the sinkhole.
    case sinkhole
    /// The sinkhole's address, but it listens on another port than the server is asked on.
    case otherPort(listenerPort: Int)
    /// Another server: answers from it pass the sinkhole by.
    case elsewhere
}

extension ResolverSetup {
    /// Whether `server` reaches one of `listeners` (UDP). A wildcard listener (`0.0.0.0`, `::`)
    /// answers on loopback and on every address of the machine (`localAddresses`); Linux's `::`
    /// also takes IPv4 unless IPV6_V6ONLY is set, which the helper does not set.
    public static func match(_ server: NameServer, listeners: [DoctorListener], localAddresses: Set<String>) -> ServerMatch {
        var otherPort: Int?
        for listener in listeners where listener.transport == DoctorListener.udp {
            let host = canonicalAddress(listener.host) ?? listener.host
            let sameAddress: Bool
            if isWildcard(host) {
                let family = host == "::" || !server.host.contains(":")
                sameAddress = family && (isLoopback(server.host) || localAddresses.contains(server.host))
            } else {
                sameAddress = host == server.host
            }
            guard sameAddress else { continue }
            if listener.port == server.port { return .sinkhole }
            otherPort = otherPort ?? listener.port
        }
        return otherPort.map { .otherPort(listenerPort: $0) } ?? .elsewhere
    }

    /// The address to tell people to put in their resolver: a port-53 listener, loopback first
    /// (a wildcard one as 127.0.0.1 or ::1). Nil when nothing listens on port 53.
    public static func suggestedAddress(listeners: [DoctorListener]) -> String? {
        let on53 = listeners.filter { $0.transport == DoctorListener.udp && $0.port == 53 }
        let hosts = on53.map { listener -> String in
            switch listener.host {
            case "0.0.0.0": "127.0.0.1"
            case "::": "::1"
            default: listener.host
            }
        }
        return hosts.first(where: isLoopback) ?? hosts.first
    }
}
