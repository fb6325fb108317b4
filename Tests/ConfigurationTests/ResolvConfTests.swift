@testable import Config
import Sinkhole
import Testing

/// The upstreams read from /etc/resolv.conf when neither flags nor the file name any (SPEC §13).
@Suite struct ResolvConfTests {
    @Test func resolv_conf_upstreams_skip_only_ourselves() throws {
        let text = """
            # generated
            nameserver 127.0.0.1
            nameserver 127.0.0.53
            nameserver 192.168.1.1
            nameserver fe80::1%eth0
            nameserver 2001:db8::53
            options edns0
            nameserver 192.168.1.1
            """
        let asRoot = ResolvConf.upstreams(fromText: text, excluding: [HostPort(host: "127.0.0.1", port: 53)])
        #expect(asRoot.map(\.description) == ["127.0.0.53:53", "192.168.1.1:53", "[2001:db8::53]:53"])
        let unprivileged = ResolvConf.upstreams(fromText: text, excluding: [HostPort(host: "127.0.0.1", port: 5300)])
        #expect(unprivileged.first?.description == "127.0.0.1:53")
        let wildcard = ResolvConf.upstreams(fromText: text, excluding: [HostPort(host: "0.0.0.0", port: 53)])
        #expect(wildcard.map(\.description) == ["192.168.1.1:53", "[2001:db8::53]:53"])
    }
}
