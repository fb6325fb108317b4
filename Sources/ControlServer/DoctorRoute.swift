import ControlAPI
import Enforcement
import Engine
import Firewall
import Foundation
import HostsMode
import ScrollOffCore
import NIOCore
import Sinkhole
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// What `doctor` needs from the DNS side, handed over by `HelperMain`.
public struct DoctorSources: Sendable {
    /// Filled by the `DNSServer` as it binds.
    public var listeners: BoundListeners
    /// The blocking answer in force, which a reload may change (the probe expects that answer).
    public var blocking: BlockingSettingsStore
    public var blockingMode: BlockingMode { blocking.current.mode }
    /// The forwarder's upstreams in force, once `HelperMain` has made the forwarder.
    public var upstreams: DoctorUpstreams
    /// Hosts mode's state (SPEC §10); nil in `--mode dns`.
    package var hosts: HostsModeStatus?
    /// The firewall table (SPEC §9b); reported only while it is on.
    package var firewall: FirewallController?

    public init(listeners: BoundListeners = BoundListeners(), blocking: BlockingSettingsStore = BlockingSettingsStore(), upstreams: DoctorUpstreams = DoctorUpstreams()) {
        self.listeners = listeners
        self.blocking = blocking
        self.upstreams = upstreams
    }

}

/// The forwarder whose upstreams `doctor` reports. The control server starts before the forwarder
/// is made, so `HelperMain` hands it over afterwards; until then no upstream is reported.
public final class DoctorUpstreams: Sendable {
    private let forwarder = Mutex<Forwarder?>(nil)

    public init() {}

    public func follow(_ forwarder: Forwarder) { self.forwarder.withLock { $0 = forwarder } }

    /// The upstreams new questions go to, as literal addresses with ports (a reload may change them).
    public var current: [NameServer] {
        let addresses = forwarder.withLock { $0?.configuration.upstreams } ?? []
        return addresses.compactMap { address in
            guard let host = address.ipAddress, let port = address.port else { return nil }
            return NameServer(host: host, port: port)
        }
    }

    /// Each upstream's health in force now, for the `upstreams` check.
    public var health: [DoctorUpstreamHealth] {
        let statuses = forwarder.withLock { $0?.upstreamStatuses() } ?? []
        return statuses.compactMap { status in
            guard let server = try? HostPort(parsing: status.address, defaultPort: 53) else { return nil }
            return DoctorUpstreamHealth(
                upstream: NameServer(host: server.host, port: server.port), up: status.up,
                consecutiveFailures: status.consecutiveFailures)
        }
    }
}

/// `GET /v1/doctor` (SPEC §11): gathers the facts only the helper has. Any member of the group may
/// read it for the profiles they may use; the checks themselves are made by the CLI.
enum DoctorRoute {
    static func facts(_ request: ControlRequest, _ context: ControlContext, engine: HelperEngine) async throws -> ControlResponse {
        let listeners = context.doctor.listeners.current.map { bound in
            DoctorListener(transport: bound.transport == .udp ? DoctorListener.udp : DoctorListener.tcp,
                           host: bound.address.host, port: bound.address.port)
        }
        let target = DoctorProbeFacts.target(among: listeners)
        let client = target.flatMap { ProbeSource.address(towards: $0.host, port: $0.port) }
        let engineFacts = await engine.doctorFacts(profile: request.profile, probeClient: client)
        let probe = target.map { target in
            DoctorProbeFacts(
                host: target.host, port: target.port,
                blockedName: engineFacts.blocked?.name ?? CanaryLink.doctorProbeName,
                blockedEntry: engineFacts.blocked?.entry.rawValue,
                reservedName: CanaryLink.doctorProbeName, blockingMode: context.doctor.blockingMode.rawValue)
        }
        let period = await context.lists.plan.period.milliseconds / 1000
        let lists = try await context.lists.listsResponse().lists.map { list in
            DoctorListFacts(name: list.name, lastSuccess: list.lastSuccess, periodSeconds: period, lastError: list.lastError, lastErrorCode: list.lastErrorCode)
        }
        return .ok(DoctorFacts(
            version: context.version, pid: getpid(), now: context.clock().date, profile: request.profile,
            listeners: listeners, upstreams: context.doctor.upstreams.current,
            upstreamHealth: context.doctor.upstreams.health, probe: probe, lists: lists, clock: engineFacts.clock, database: engineFacts.database,
            hosts: context.doctor.hosts?.facts, firewall: await context.doctor.firewall?.doctorFacts()))
    }
}

/// The source address the kernel picks for a datagram to `host` from this machine: what the
/// sinkhole will see as the client of the CLI's probes (127.0.0.1 for any 127/8 target on Linux,
/// an interface's own address for itself). A connected UDP socket sends nothing; `getsockname`
/// reads the route's choice.
enum ProbeSource {
    static func address(towards host: String, port: Int) -> ClientIP? {
        let v6 = host.contains(":")
        let fd = socket(v6 ? AF_INET6 : AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { return ClientIP(host) }
        defer { close(fd) }
        if v6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = in_port_t(UInt16(clamping: port)).bigEndian
            guard inet_pton(AF_INET6, host, &address.sin6_addr) == 1 else { return ClientIP(host) }
            var local = sockaddr_in6()
            var length = socklen_t(MemoryLayout<sockaddr_in6>.size)
            let ok = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) == 0 }
            } && withUnsafeMutablePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) == 0 }
            }
            guard ok else { return ClientIP(host) }
            var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
            guard inet_ntop(AF_INET6, &local.sin6_addr, &text, socklen_t(text.count)) != nil else { return ClientIP(host) }
            return ClientIP(String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(clamping: port)).bigEndian
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else { return ClientIP(host) }
        var local = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        } && withUnsafeMutablePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) == 0 }
        }
        guard ok else { return ClientIP(host) }
        return .v4(UInt32(bigEndian: local.sin_addr.s_addr))
    }
}
