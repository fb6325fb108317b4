#if canImport(Glibc)
import Glibc
#endif
import DNSWire
import NIOCore
import PortDiagnostics

/// Binding a listen address failed at start-up (fatal, ARCHITECTURE.md principle 5), with what
/// was in the way and how to clear it: port 53 is often taken already by systemd-resolved's stub
/// or a dnsmasq, and "address in use" alone leaves a person guessing (SPEC §13: errors say what to do).
public struct ListenError: Error, Sendable, CustomStringConvertible {
    public enum Cause: Sendable, Equatable {
        /// EADDRINUSE, with the programs found holding the port (empty when /proc hides them).
        case inUse(holders: [PortHolder])
        /// EACCES: a port below 1024 without root or CAP_NET_BIND_SERVICE.
        case permissionDenied(isRoot: Bool)
        /// EADDRNOTAVAIL: no interface has this address (yet).
        case addressNotAvailable
        case other(String)
    }

    public var address: HostPort
    public var transport: DNSTransport
    public var cause: Cause

    public init(address: HostPort, transport: DNSTransport, cause: Cause) {
        self.address = address
        self.transport = transport
        self.cause = cause
    }

    /// Classifies a bind failure and, for a port in use, looks up who holds it.
    public static func diagnose(address: HostPort, transport: DNSTransport, error: any Error) -> ListenError {
        let code = (error as? IOError)?.errnoCode
        let cause: Cause
        switch code {
        case EADDRINUSE?:
            let bytes = ProcNetSocket.bytes(ofAddress: address.host)
            cause = .inUse(holders: bytes.map { PortHolders.find(address: $0, port: address.port, transport: transport) } ?? [])
        case EACCES?, EPERM?:
            cause = .permissionDenied(isRoot: geteuid() == 0)
        case EADDRNOTAVAIL?:
            cause = .addressNotAvailable
        default:
            cause = .other("\(error)")
        }
        return ListenError(address: address, transport: transport, cause: cause)
    }

    public var description: String {
        let head = "cannot listen on \(transport == .udp ? "udp" : "tcp") \(address)"
        switch cause {
        case .inUse(let holders):
            guard !holders.isEmpty else {
                return "\(head): the port is in use by another program this user cannot see. "
                    + "Find it with `sudo ss -lunpt 'sport = :\(address.port)'`, stop it or give scrolloff-dns another --listen "
                    + "(README: Install as a service)."
            }
            return "\(head): the port is in use by " + holders.map(\.summary).joined(separator: ", ") + ". "
                + advice(for: holders).joined(separator: " ")
        case .permissionDenied(let isRoot):
            if isRoot {
                return "\(head): permission denied even as root. Under systemd the unit must keep CAP_NET_BIND_SERVICE "
                    + "in CapabilityBoundingSet (etc/systemd/scrolloff-dns.service does)."
            }
            return "\(head): ports below 1024 need root or CAP_NET_BIND_SERVICE. Run it as root (sudo, or the systemd unit "
                + "from `make install`), or try without with --listen 127.0.0.1:5300."
        case .addressNotAvailable:
            return "\(head): no network interface has the address \(address.host). Check it with `ip -brief address`; "
                + "a LAN address appears only once the network is up (the unit waits for network-online.target)."
        case .other(let reason):
            return "\(head): \(reason)."
        }
    }

    /// One fix per kind of holder, in the order they were found.
    func advice(for holders: [PortHolder]) -> [String] {
        var seen: [PortHolder.Kind] = []
        var lines: [String] = []
        for holder in holders where !seen.contains(holder.kind) {
            seen.append(holder.kind)
            switch holder.kind {
            case .systemdResolved:
                lines.append(
                    "That is systemd-resolved's stub listener. Either listen only on 127.0.0.1 "
                        + "(--listen 127.0.0.1:\(address.port) does not clash with the stub on 127.0.0.53), or turn the stub off: "
                        + "write `[Resolve]` and `DNSStubListener=no` to /etc/systemd/resolved.conf.d/scrolloff.conf, "
                        + "then `systemctl restart systemd-resolved`.")
            case .dnsmasq(underNetworkManager: true):
                lines.append(
                    "That is NetworkManager's dnsmasq plugin. Turn it off with `dns=default` under [main] in "
                        + "/etc/NetworkManager/conf.d/scrolloff.conf and `systemctl restart NetworkManager`, "
                        + "or give scrolloff-dns an address it does not use.")
            case .dnsmasq(underNetworkManager: false):
                lines.append(
                    "That is a dnsmasq. Stop it (`systemctl disable --now dnsmasq`), or make it leave this address: "
                        + "`bind-interfaces` with its own `listen-address=` (or `port=0` if it only serves DHCP) in "
                        + "/etc/dnsmasq.conf, then restart it.")
            case .scrolloff:
                lines.append(
                    "Another scrolloff-dns already serves this address: stop it first (`systemctl stop scrolloff-dns`) "
                        + "or give this one another --listen.")
            case .other:
                if let owner = holder.owner {
                    lines.append("Stop \(owner.command) (pid \(owner.pid)) or give scrolloff-dns another --listen, for example 127.0.0.1:5300.")
                } else {
                    lines.append(
                        "Name the program with `sudo ss -lunpt 'sport = :\(address.port)'`, then stop it or give scrolloff-dns "
                            + "another --listen, for example 127.0.0.1:5300.")
                }
            }
        }
        return lines
    }
}
