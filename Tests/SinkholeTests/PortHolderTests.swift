#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import Testing

@testable import Sinkhole

/// Reading /proc/net to say who holds a port a listener wanted (SPEC §13: a port already taken is refused, naming who holds it).
struct ProcNetSocketTests {
    static let header = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops"

    struct Line: Sendable, CustomTestStringConvertible {
        var line: String
        var transport: DNSTransport
        var endpoint: String
        var state: UInt8
        var uid: UInt32
        var inode: UInt64
        var testDescription: String { endpoint }
    }

    @Test(arguments: [
        // systemd-resolved's stub as it appears in /proc/net/udp on x86-64 (uid 991 = systemd-resolve).
        Line(line: "  263: 3500007F:0035 00000000:0000 07 00000000:00000000 00:00000000 00000000   991        0 20715 2 0000000000000000 0",
             transport: .udp, endpoint: "127.0.0.53:53", state: 0x07, uid: 991, inode: 20715),
        Line(line: "   0: 3600007F:0035 00000000:0000 0A 00000000:00000000 00:00000000 00000000   991        0 20718 1 0000000000000000 100 0 0 10 0",
             transport: .tcp, endpoint: "127.0.0.54:53", state: 0x0A, uid: 991, inode: 20718),
        Line(line: "    5: 00000000:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4242 1 0000000000000000 100 0 0 10 0",
             transport: .tcp, endpoint: "0.0.0.0:8080", state: 0x0A, uid: 0, inode: 4242),
        Line(line: "  123: 00000000000000000000000001000000:0035 00000000000000000000000000000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 31337 2 0000000000000000 0",
             transport: .udp, endpoint: "[::1]:53", state: 0x07, uid: 0, inode: 31337),
        Line(line: "   7: 0000000000000000FFFF00000100007F:14B4 00000000000000000000000000000000:0000 07 00000000:00000000 00:00000000 00000000  1000        0 99 2 0000000000000000 0",
             transport: .udp, endpoint: "[::ffff:127.0.0.1]:5300", state: 0x07, uid: 1000, inode: 99),
    ])
    func a_little_endian_line_gives_address_port_state_uid_and_inode(_ row: Line) throws {
        let socket = try #require(ProcNetSocket(line: row.line, transport: row.transport, littleEndian: true))
        #expect(socket.endpointText == row.endpoint)
        #expect(socket.state == row.state)
        #expect(socket.uid == row.uid)
        #expect(socket.inode == row.inode)
    }

    @Test func a_big_endian_machine_prints_the_address_in_network_order() throws {
        let line = "   1: 7F000035:0035 00000000:0000 07 00000000:00000000 00:00000000 00000000   991        0 77 2 0000000000000000 0"
        let socket = try #require(ProcNetSocket(line: line, transport: .udp, littleEndian: false))
        #expect(socket.endpointText == "127.0.0.53:53")
    }

    @Test(arguments: [header, "", "   0: 0100007F 00000000:0000 07", "   0: 0100007Z:0035 00000000:0000 07 0:0 0:0 0 0 0 1 2 0 0",
                      "   0: 0100:0035 00000000:0000 07 00000000:00000000 00:00000000 00000000 0 0 1 2 0 0"])
    func the_header_and_malformed_lines_are_skipped(_ line: String) {
        #expect(ProcNetSocket(line: line, transport: .udp, littleEndian: true) == nil)
    }

    struct Clash: Sendable, CustomTestStringConvertible {
        var holder: String
        var transport: DNSTransport
        var state: String
        var wanted: String
        var port: Int
        var blocks: Bool
        var testDescription: String { "\(holder) \(state) vs \(wanted):\(port) → \(blocks)" }
    }

    @Test(arguments: [
        Clash(holder: "3500007F", transport: .udp, state: "07", wanted: "127.0.0.1", port: 53, blocks: false),
        Clash(holder: "3500007F", transport: .udp, state: "07", wanted: "0.0.0.0", port: 53, blocks: true),
        Clash(holder: "00000000", transport: .udp, state: "07", wanted: "127.0.0.1", port: 53, blocks: true),
        Clash(holder: "0100007F", transport: .udp, state: "07", wanted: "127.0.0.1", port: 5300, blocks: false),
        Clash(holder: "0100007F", transport: .udp, state: "07", wanted: "127.0.0.1", port: 53, blocks: true),
        Clash(holder: "00000000000000000000000000000000", transport: .udp, state: "07", wanted: "127.0.0.1", port: 53, blocks: true),
        Clash(holder: "00000000000000000000000001000000", transport: .udp, state: "07", wanted: "127.0.0.1", port: 53, blocks: false),
        Clash(holder: "0000000000000000FFFF00000100007F", transport: .udp, state: "07", wanted: "127.0.0.1", port: 53, blocks: true),
        Clash(holder: "0100007F", transport: .udp, state: "07", wanted: "::", port: 53, blocks: true),
        Clash(holder: "0100007F", transport: .tcp, state: "01", wanted: "127.0.0.1", port: 53, blocks: false),
        Clash(holder: "0100007F", transport: .tcp, state: "0A", wanted: "127.0.0.1", port: 53, blocks: true),
    ])
    func a_socket_blocks_the_same_address_and_port_or_a_wildcard(_ row: Clash) throws {
        let line = "   0: \(row.holder):0035 00000000:0000 \(row.state) 00000000:00000000 00:00000000 00000000     0        0 1 2 0000000000000000 0"
        let socket = try #require(ProcNetSocket(line: line, transport: row.transport, littleEndian: true))
        let wanted = try #require(ProcNetSocket.bytes(ofAddress: row.wanted))
        #expect(socket.blocks(address: wanted, port: row.port) == row.blocks)
    }

    @Test(arguments: [("socket:[12345]", UInt64(12345)), ("pipe:[12345]", nil), ("/dev/null", nil), ("socket:[]", nil)] as [(String, UInt64?)])
    func only_socket_links_name_an_inode(_ link: String, _ inode: UInt64?) {
        #expect(PortHolders.socketInode(fromLink: link) == inode)
    }

    @Test(arguments: [("812 (dnsmasq) S 640 812 812 0 -1", Int32(640)), ("9 (a (b) c) R 42 9 9", Int32(42)), ("garbage", nil)] as [(String, Int32?)])
    func the_parent_pid_is_read_after_the_command_in_parentheses(_ stat: String, _ parent: Int32?) {
        #expect(PortHolders.parentPID(fromStat: stat) == parent)
    }

    /// A real socket of this test process, found through the real /proc.
    @Test(arguments: [DNSTransport.udp, .tcp])
    func a_socket_of_this_process_is_found_with_its_pid_and_command(_ transport: DNSTransport) throws {
        // CLOEXEC: tests run in parallel, and a helper spawned meanwhile must not inherit this socket.
        let descriptor = socket(AF_INET, Int32((transport == .udp ? SOCK_DGRAM : SOCK_STREAM).rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0 }
        }
        try #require(bound)
        if transport == .tcp { try #require(listen(descriptor, 1) == 0) }
        let port = Int(UInt16(bigEndian: address.sin_port))
        let holders = PortHolders.find(address: [127, 0, 0, 1], port: port, transport: transport)
        let holder = try #require(holders.first)
        #expect(holders.count == 1)
        #expect(holder.owner?.pid == getpid())
        #expect(holder.socket.endpointText == "127.0.0.1:\(port)")
        #expect(PortHolders.find(address: [127, 0, 0, 2], port: port, transport: transport).isEmpty)
    }
}

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
