import Engine
import Foundation
import Logging
import ScrollOffCore
import Store

/// One try to get around the sinkhole that the firewall caught (SPEC §9b): who, to which server,
/// on which port (53 another resolver, 853 DNS over TLS, 443 DNS over HTTPS, any other port of a
/// listed resolver's address: DNSCrypt, DNS over QUIC, DNS on another port).
package struct BypassAttempt: Hashable, Sendable, Codable {
    var client: String
    var server: String
    var port: Int

    /// The sentence of its event, for the person reading `scrolloff events`. `local` = the client
    /// is one of this machine's own addresses (a program here, not a device on the LAN).
    func message(local: Bool) -> String {
        let who = local ? "A program on this machine" : "A device (\(client))"
        switch port {
        case 53: return "\(who) asked \(server) for DNS directly; Scroll Off answered instead."
        case 853: return "\(who) tried DNS over TLS to \(server); the firewall refused it."
        case 443: return "\(who) tried DNS over HTTPS to \(server); the firewall refused it."
        default: return "\(who) tried the DNS resolver \(server) on port \(port); the firewall refused it."
        }
    }
}

/// An attempt as read from the table, with the packets its set element counted since the last read.
struct CaughtAttempt: Sendable {
    var attempt: BypassAttempt
    var packets: UInt64
}

/// Attempts per device and kind since the helper started, for the metrics and `doctor` (SPEC §9b).
///
/// Bounded: a LAN has tens of devices, but addresses are what a client sends, and IPv6 privacy
/// addresses change daily; past `maxClients` addresses, the rest are counted under "other" so
/// neither memory nor the metrics' label sets grow without end.
struct ClientAttemptTally: Sendable {
    static let maxClients = 256
    static let other = "other"

    /// By client address, then kind (`dns`, `dot`, `doh`, `resolver`).
    private(set) var counts: [String: [String: UInt64]] = [:]

    static func kind(ofPort port: Int) -> String {
        switch port {
        case 53: "dns"
        case 853: "dot"
        case 443: "doh"
        default: "resolver"
        }
    }

    mutating func add(_ caught: [CaughtAttempt]) {
        for item in caught {
            var client = item.attempt.client
            if counts[client] == nil, counts.count >= Self.maxClients { client = Self.other }
            counts[client, default: [:]][Self.kind(ofPort: item.attempt.port), default: 0] += item.packets
        }
    }

    /// The clients with the most attempts, most first (ties by address), for `doctor`.
    func top(_ limit: Int) -> [(client: String, attempts: UInt64)] {
        counts.map { (client: $0.key, attempts: $0.value.values.reduce(0, +)) }
            .sorted { ($0.attempts, $1.client) > ($1.attempts, $0.client) }
            .prefix(limit).map { $0 }
    }
}

/// How often one attempt becomes an event: once an hour for the same (client, server, port), and
/// at most `perRead` new events each time the sets are read, so an app retrying every second
/// fills neither the events list nor the database (the counters still count every packet).
struct BypassEventLimiter {
    static let quiet: TimeInterval = 3600
    static let perRead = 20
    private var lastRecorded: [BypassAttempt: Date] = [:]

    mutating func admit(_ attempts: [BypassAttempt], now: Date) -> [BypassAttempt] {
        lastRecorded = lastRecorded.filter { now.timeIntervalSince($0.value) < Self.quiet }
        var admitted: [BypassAttempt] = []
        for attempt in Set(attempts).sorted(by: { ($0.client, $0.server, $0.port) < ($1.client, $1.server, $1.port) })
        where lastRecorded[attempt] == nil && admitted.count < Self.perRead {
            lastRecorded[attempt] = now
            admitted.append(attempt)
        }
        return admitted
    }
}

/// This machine's own addresses (getifaddrs), to tell its programs from LAN devices.
enum LocalAddresses {
    static func current() -> Set<String> {
        var result: Set<String> = []
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return result }
        defer { freeifaddrs(list) }
        var cursor: UnsafeMutablePointer<ifaddrs>? = first
        while let entry = cursor {
            defer { cursor = entry.pointee.ifa_next }
            guard let address = entry.pointee.ifa_addr else { continue }
            var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            let length = socklen_t(address.pointee.sa_family == sa_family_t(AF_INET6) ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
            guard [sa_family_t(AF_INET), sa_family_t(AF_INET6)].contains(address.pointee.sa_family),
                  getnameinfo(address, length, &host, socklen_t(host.count), nil, 0, NI_NUMERICHOST) == 0 else { continue }
            let text = String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            result.insert(text.split(separator: "%").first.map(String.init) ?? text) // drop an IPv6 zone
        }
        return result
    }
}

extension StoredEvent {
    /// A bypass attempt the firewall caught (SPEC §9b); machine-wide, with the client's address.
    init(_ attempt: BypassAttempt, local: Bool, at time: Instant) {
        self.init(profile: nil, time: time, kind: .bypassAttempt, clientIP: attempt.client, message: attempt.message(local: local),
                  payload: Self.json(attempt))
    }
}

extension StoredEvent {
    fileprivate static func json(_ attempt: BypassAttempt) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(attempt)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}

/// Bypass attempts the firewall caught in one read, as the events the engine records (SPEC §9b;
/// `HelperEngine.record`), in one commit for the lot. `localAddresses`: this machine's own, to tell
/// its programs from LAN devices in each event's sentence.
package struct CaughtBypassAttempts: ObservedEvent {
    package var attempts: [BypassAttempt]
    package var localAddresses: Set<String>

    package init(_ attempts: [BypassAttempt], localAddresses: Set<String>) {
        self.attempts = attempts
        self.localAddresses = localAddresses
    }

    package var isEmpty: Bool { attempts.isEmpty }

    package func log(to logger: Logger) {
        logger.notice("firewall: \(attempts.count) bypass attempts caught", metadata: [
            "firewall.attempts": "\(attempts.map { "\($0.client)->\($0.server):\($0.port)" }.joined(separator: ","))",
        ])
    }

    package func storedEvents(at now: Instant) -> [StoredEvent] {
        attempts.map { StoredEvent($0, local: localAddresses.contains($0.client), at: now) }
    }
}
