#if canImport(Glibc)
import Glibc
#endif
import DNSWire
import Testing

@testable import PortDiagnostics

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
