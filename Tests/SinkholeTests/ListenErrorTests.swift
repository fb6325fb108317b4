#if canImport(Glibc)
import Glibc
#endif
import DNSWire
import NIOCore
import PortDiagnostics
import Testing

@testable import Sinkhole

/// What the error says for each kind of holder and failure.
struct ListenErrorTests {
    static func holder(_ command: String?, parent: String? = nil, user: String? = nil, address: String = "0100007F", uid: UInt32 = 0) -> PortHolder {
        let line = "   0: \(address):0035 00000000:0000 07 00000000:00000000 00:00000000 00000000   \(uid)        0 1 2 0000000000000000 0"
        // The line is a fixed literal of the right shape.
        let socket = ProcNetSocket(line: line, transport: .udp, littleEndian: true)!
        return PortHolder(socket: socket, owner: command.map { .init(pid: 812, command: $0, parentCommand: parent) }, userName: user)
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var holder: PortHolder
        var kind: PortHolder.Kind
        var mentions: [String]
        var testDescription: String { name }
    }

    @Test(arguments: [
        Case(name: "resolved by command", holder: holder("systemd-resolve", address: "3500007F"), kind: .systemdResolved,
             mentions: ["systemd-resolve (pid 812) on udp 127.0.0.53:53", "DNSStubListener=no", "/etc/systemd/resolved.conf.d/scrolloff.conf",
                        "--listen 127.0.0.1:53"]),
        Case(name: "resolved hidden, by user", holder: holder(nil, user: "systemd-resolve", address: "3500007F", uid: 991), kind: .systemdResolved,
             mentions: ["a process of user systemd-resolve on udp 127.0.0.53:53", "DNSStubListener=no"]),
        Case(name: "resolved hidden, by address", holder: holder(nil, address: "3600007F", uid: 4242), kind: .systemdResolved,
             mentions: ["a process of uid 4242 on udp 127.0.0.54:53", "DNSStubListener=no"]),
        Case(name: "NetworkManager's dnsmasq", holder: holder("dnsmasq", parent: "NetworkManager"), kind: .dnsmasq(underNetworkManager: true),
             mentions: ["dnsmasq (pid 812)", "NetworkManager's dnsmasq plugin", "dns=default"]),
        Case(name: "a dnsmasq service", holder: holder("dnsmasq", parent: "systemd"), kind: .dnsmasq(underNetworkManager: false),
             mentions: ["dnsmasq (pid 812)", "systemctl disable --now dnsmasq", "listen-address="]),
        Case(name: "another scrolloff-dns", holder: holder("scrolloff-dns"), kind: .scrolloff,
             mentions: ["Another scrolloff-dns", "systemctl stop scrolloff-dns"]),
        Case(name: "anything else", holder: holder("named"), kind: .other, mentions: ["Stop named (pid 812)", "127.0.0.1:5300"]),
        Case(name: "anything else, hidden", holder: holder(nil, user: "root", address: "00000000"), kind: .other,
             mentions: ["a process of user root on udp 0.0.0.0:53", "ss -lunpt 'sport = :53'", "127.0.0.1:5300"]),
    ])
    func a_port_in_use_names_the_holder_and_its_fix(_ row: Case) {
        #expect(row.holder.kind == row.kind)
        let error = ListenError(address: HostPort(host: "0.0.0.0", port: 53), transport: .udp, cause: .inUse(holders: [row.holder]))
        #expect(error.description.hasPrefix("cannot listen on udp 0.0.0.0:53: the port is in use by "))
        for text in row.mentions { #expect(error.description.contains(text), "\(text) in \(error.description)") }
    }

    @Test func a_port_in_use_by_a_hidden_process_says_how_to_find_it() {
        let error = ListenError(address: HostPort(host: "127.0.0.1", port: 53), transport: .tcp, cause: .inUse(holders: []))
        #expect(error.description.contains("cannot listen on tcp 127.0.0.1:53"))
        #expect(error.description.contains("ss -lunpt 'sport = :53'"))
    }

    @Test func one_program_on_many_sockets_gets_its_fix_once() {
        let error = ListenError(
            address: HostPort(host: "127.0.0.1", port: 53), transport: .udp,
            cause: .inUse(holders: [Self.holder("dnsmasq"), Self.holder("dnsmasq", address: "00000000")]))
        #expect(error.description.components(separatedBy: "systemctl disable --now dnsmasq").count == 2)
    }

    struct Failure: Sendable, CustomTestStringConvertible {
        var errno: Int32
        var cause: String
        var mentions: String
        var testDescription: String { cause }
    }

    @Test(arguments: [
        Failure(errno: EACCES, cause: "permissionDenied", mentions: "CAP_NET_BIND_SERVICE"),
        Failure(errno: EADDRNOTAVAIL, cause: "addressNotAvailable", mentions: "ip -brief address"),
        Failure(errno: EINVAL, cause: "other", mentions: "bind"),
    ])
    func a_bind_errno_is_classified(_ row: Failure) {
        let error = ListenError.diagnose(
            address: HostPort(host: "192.0.2.7", port: 53), transport: .udp, error: IOError(errnoCode: row.errno, reason: "bind"))
        #expect("\(error.cause)".hasPrefix(row.cause), "\(error.cause)")
        #expect(error.description.contains(row.mentions), "\(error.description)")
    }

    @Test(arguments: [false, true])
    func permission_denied_says_what_to_do_as_user_and_as_root(_ isRoot: Bool) {
        let error = ListenError(address: HostPort(host: "127.0.0.1", port: 53), transport: .udp, cause: .permissionDenied(isRoot: isRoot))
        #expect(error.description.contains("CAP_NET_BIND_SERVICE"))
        #expect(error.description.contains("--listen 127.0.0.1:5300") == !isRoot)
        #expect(error.description.contains("CapabilityBoundingSet") == isRoot)
    }
}
