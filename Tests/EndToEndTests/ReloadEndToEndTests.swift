import Foundation
import Testing

/// `systemctl reload scrolloff-dns` is SIGHUP to the real binary: the configuration file is read
/// again, a good file takes effect without a restart, a bad one is reported with its key and line
/// and the configuration in force stays (ARCHITECTURE principle 5, SPEC §13).
@Suite struct ReloadEndToEndTests {
    /// The `status:` of dig's header for `name` A.
    static func status(_ port: Int, _ name: String) throws -> String {
        let output = try dig(port, ["+time=2", "+tries=1", name, "A"])
        guard let header = output.split(separator: "\n").first(where: { $0.contains("status: ") }),
              let status = header.split(separator: "status: ").last?.split(separator: ",").first
        else { return "no answer: \(output)" }
        return String(status)
    }

    /// Polls until `condition` holds: a reload is applied asynchronously after the signal.
    static func eventually(seconds: Double = 10, _ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try condition() { return true }
            Thread.sleep(forTimeInterval: 0.1)
        }
        return try condition()
    }

    static func write(_ path: String, _ text: String) throws {
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    @Test func sighup_applies_a_new_blocking_mode_and_keeps_it_when_the_next_file_is_bad() throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let config = try scratch.file("reload.toml", "[dns]\nblocking_mode = \"null\"\n")
        let server = try Sinkhole(scratch: scratch, upstreams: [upstream.port], blocklist: ["blocked.test"],
                                  extra: ["--config", config])
        #expect(try shortA(server.port, "blocked.test") == "0.0.0.0")

        try Self.write(config, "[dns]\nblocking_mode = \"nxdomain\"\n")
        server.child.signal(SIGHUP)
        #expect(try Self.eventually { try Self.status(server.port, "blocked.test") == "NXDOMAIN" })
        #expect(try Self.status(server.port, "host.test") == "NOERROR", "allowed names still forwarded")

        // A bad value on line 3: reported with the key and line, and NXDOMAIN stays in force.
        try Self.write(config, "[dns]\n\nblocking_mode = \"drop\"\n")
        server.child.signal(SIGHUP)
        #expect(Self.eventually { server.child.stderr.contains("\(config):3: dns.blocking_mode") }, "\(server.child.stderr)")
        #expect(try Self.status(server.port, "blocked.test") == "NXDOMAIN")
        #expect(server.child.isRunning)
    }

    @Test func sighup_moves_forwarding_to_the_upstream_the_file_now_names() throws {
        let scratch = try Scratch()
        let first = try Dnsmasq(scratch: scratch)
        let second = try Dnsmasq(scratch: scratch)
        let config = try scratch.file("upstreams.toml", "[dns]\nupstreams = [\"127.0.0.1:\(first.port)\"]\n")
        let server = try Sinkhole(scratch: scratch, upstreams: [], extra: ["--config", config])
        #expect(try shortA(server.port, "host.test") == "10.0.0.7")
        #expect(first.queries(for: "host.test") >= 1)

        try Self.write(config, "[dns]\nupstreams = [\"127.0.0.1:\(second.port)\"]\n")
        server.child.signal(SIGHUP)
        // Each probe is a name never asked before (dnsmasq answers every name under fwd.test), so
        // the cache cannot answer it: once the reload is in force it must reach `second`.
        var probe = 0
        #expect(try Self.eventually {
            probe += 1
            return try shortA(server.port, "r\(probe).fwd.test") == "10.1.2.3" && second.queries(for: "r\(probe).fwd.test") == 1
        })
        #expect(try shortA(server.port, "after.fwd.test") == "10.1.2.3")
        #expect(Self.eventually(seconds: 3) { second.queries(for: "after.fwd.test") == 1 })
        #expect(first.queries(for: "after.fwd.test") == 0, "the old upstream is no longer asked")
    }
}
