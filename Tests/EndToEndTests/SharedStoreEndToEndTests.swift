import Foundation
#if canImport(Glibc)
import Glibc
#endif
import TestSupport
import Testing

/// Two real `scrolloff-dns` processes on one real PostgreSQL (the shared store's faults as processes): a
/// helper SIGKILLed mid-spend, a helper cut off from the database in a network namespace, a helper
/// whose clock is 2 hours off, a server that accepts and never answers. Each test starts its own
/// server (about a second) and stops everything it started in `defer`.
@Suite(.serialized) struct SharedStoreEndToEndTests {
    /// A spend through A, A SIGKILLed mid-spend; B answers from the shared state, ends the grant at
    /// its end once and charges exactly its length. Then the same with B killed and A going on.
    @Test func a_helper_killed_mid_spend_leaves_the_other_to_end_the_grant_once_and_charge_exactly_its_length() throws {
        let scratch = try Scratch()
        let db = try TestPostgres()
        defer { db.stop() }
        let upstream = try Dnsmasq(scratch: scratch)
        var a = try HouseholdNode("pg-a", url: db.socketURL, scratch: scratch, upstream: upstream.port)
        let b = try HouseholdNode("pg-b", url: db.socketURL, scratch: scratch, upstream: upstream.port)
        defer { a.stop(); b.stop() }
        let blocked = try a.cli(["block", "instagram"])
        #expect(blocked.exitCode == 0, "\(blocked)")
        #expect(eventually { b.blocks("www.instagram.com") }, "the block never reached B")

        // Round 1: spend through A, A dies, B carries the grant to its end.
        let use = try a.cli(["use", "instagram", "--for", "4s"])
        #expect(use.exitCode == 0, "\(use)")
        #expect(eventually { !b.blocks("www.instagram.com") }, "B never learned of the spend")
        a.stop(signal: SIGKILL)
        #expect(eventually(seconds: 15) { (try? db.query("SELECT count(*) FROM grants WHERE ended_at IS NULL")) == "0" },
                "B never ended the grant A opened")
        #expect(b.blocks("www.instagram.com"), "B opens instagram past the grant's end")
        #expect(try db.query("SELECT count(*), sum(ended_at - start) FROM grants") == "1|4000")
        #expect(try db.query("SELECT -sum(delta_seconds) FROM ledger WHERE reason = 'spend'") == "4")
        let problems = try Self.ledgerProblems(db)
        #expect(problems.isEmpty, "\(problems)")

        // Round 2: A back on its state, a spend through it, B dies; A goes on alone.
        a = try HouseholdNode("pg-a", url: db.socketURL, scratch: scratch, upstream: upstream.port, label: "pg-a-again")
        let again = try a.cli(["use", "instagram", "--for", "3s"])
        #expect(again.exitCode == 0, "\(again)")
        Thread.sleep(forTimeInterval: 0.5)
        b.stop(signal: SIGKILL)
        #expect(eventually(seconds: 15) { (try? db.query("SELECT count(*) FROM grants WHERE ended_at IS NULL")) == "0" },
                "A never ended its grant")
        #expect(try db.query("SELECT count(*), sum(ended_at - start) FROM grants") == "2|7000")
        #expect(try db.query("SELECT -sum(delta_seconds) FROM ledger WHERE reason = 'spend'") == "7")
        let problemsAfter = try Self.ledgerProblems(db)
        #expect(problemsAfter.isEmpty, "\(problemsAfter)")
        #expect(a.blocks("www.instagram.com"))
    }

    /// B's machine runs 2 hours fast (libfaketime, wall clock only). The rules use the database's
    /// clock, so what B writes is dated by it, a spend B opens is charged its real length, and
    /// `doctor` names B's clock.
    @Test func a_helper_whose_clock_is_two_hours_fast_dates_its_rules_by_the_database_and_doctor_names_it() throws {
        let scratch = try Scratch()
        let db = try TestPostgres()
        defer { db.stop() }
        let upstream = try Dnsmasq(scratch: scratch)
        let fast = try scratch.file("clock", "+2h\n")
        let a = try HouseholdNode("pg-a", url: db.socketURL, scratch: scratch, upstream: upstream.port)
        let b = try HouseholdNode("pg-b", url: db.socketURL, scratch: scratch, upstream: upstream.port,
                                  environment: FakeClock.wallOnly(timestampFile: fast))
        defer { a.stop(); b.stop() }
        #expect(try a.cli(["block", "instagram"]).exitCode == 0)
        #expect(eventually { b.blocks("www.instagram.com") })
        let use = try b.cli(["use", "instagram", "--for", "2s"])
        #expect(use.exitCode == 0, "\(use)")
        #expect(eventually(seconds: 15) { (try? db.query("SELECT count(*) FROM grants WHERE ended_at IS NULL")) == "0" })
        // The grant's start by the server's clock, not 2 hours ahead of it.
        let ahead = try #require(Int(try db.query("SELECT max(start) - (extract(epoch from clock_timestamp()) * 1000)::bigint FROM grants")))
        #expect(ahead < 5_000 && ahead > -60_000, "the grant opened on B starts \(ahead) ms from the server's now")
        #expect(try db.query("SELECT -sum(delta_seconds) FROM ledger WHERE reason = 'spend'") == "2")
        #expect(try Self.ledgerProblems(db).isEmpty)

        let doctor = try runWithStatus(Products.scrolloff, ["doctor", "--socket", a.controlSocket, "--nsswitch-conf", "/dev/null"])
        #expect(doctor.output.contains("helper pg-b's clock is") && doctor.output.contains("ahead of the database server's"), "\(doctor)")
    }

    /// B runs in a network namespace and reaches PostgreSQL over a veth pair; an nft drop rule in
    /// the namespace cuts it off while A takes writes. B answers DNS from its snapshot, closes a
    /// running grant at its end (fail closed, never open), refuses a write with a clear message
    /// in bounded time; when the rule goes, B has A's writes within a second.
    @Test func a_helper_cut_off_from_the_database_answers_from_its_snapshot_refuses_writes_and_converges_within_a_second() throws {
        let scratch = try Scratch()
        let net = try CutNetwork()
        defer { net.remove() }
        let db = try TestPostgres(tcpAddress: net.hostAddress)
        defer { db.stop() }
        let upstream = try Dnsmasq(scratch: scratch)
        // B's upstream in its namespace answers every name at once, so an open name is told from
        // a blocked one without waiting out a query.
        let inside = try Child("/usr/sbin/ip", ["netns", "exec", net.namespace, "/usr/sbin/dnsmasq", "--no-daemon", "--conf-file=/dev/null",
                                                "--port=5353", "--listen-address=127.0.0.1", "--bind-interfaces", "--no-resolv", "--no-hosts",
                                                "--address=/#/10.9.9.9", "--pid-file="], scratch: scratch, label: "dnsmasq-pg-b")
        defer { if inside.isRunning { inside.signal(SIGTERM); inside.process.wait() } }
        let a = try HouseholdNode("pg-a", url: db.socketURL, scratch: scratch, upstream: upstream.port)
        let b = try HouseholdNode("pg-b", url: try #require(db.tcpURL), scratch: scratch, upstream: 5353,
                                  listen: net.namespaceAddress, wrappers: [.namespace(net.namespace)])
        defer { a.stop(); b.stop() }
        #expect(try a.cli(["block", "instagram", "tiktok"]).exitCode == 0)
        #expect(eventually { b.blocks("www.tiktok.com") }, "the block never reached B")
        #expect(try a.cli(["use", "instagram", "--for", "4s"]).exitCode == 0)
        #expect(eventually { !b.blocks("www.instagram.com") }, "B never learned of the spend")

        try net.cut(port: db.port)
        let cut = Date()
        // A takes a write (B may have been cut off inside a commit, holding the household row: the
        // server ends that transaction after 3 s); B, cut off, does not see it.
        let written = try a.cli(["block", "youtube"])
        #expect(written.exitCode == 0, "\(written)")
        #expect(b.blocks("www.tiktok.com"), "B answers from its snapshot")
        #expect(!b.blocks("www.youtube.com"), "B cannot know of A's change while cut off")
        // Past the grant's end B blocks instagram again from its snapshot, though it cannot record the end.
        Thread.sleep(forTimeInterval: max(0, 4.5 - Date().timeIntervalSince(cut)))
        #expect(b.blocks("www.instagram.com"), "B keeps instagram open past the end of the grant")
        // A write asked of B is refused, says why, and ends in bounded time.
        let asked = Date()
        let refused = try b.cli(["block", "reddit"])
        let took = Date().timeIntervalSince(asked)
        #expect(refused.exitCode != 0 && refused.output.contains("household database"), "\(refused)")
        #expect(took < 15, "the refusal took \(took) s")

        try net.restore()
        let restored = Date()
        var converged: TimeInterval?
        while converged == nil, Date().timeIntervalSince(restored) < 10 {
            if b.blocks("www.youtube.com") { converged = Date().timeIntervalSince(restored) } else { usleep(20_000) }
        }
        let log = b.child.stderr.split(separator: "\n").filter { $0.contains("household") }.joined(separator: "\n")
        #expect(converged != nil, "B never took A's change: \(log)")
        #expect((converged ?? 10) < 1.0, "B converged \(converged ?? 10) s after the route came back: \(log)")
        #expect(!b.blocks("www.reddit.com"), "the refused write was not applied later")
        #expect(try db.query("SELECT count(*), sum(ended_at - start) FROM grants") == "1|4000", "ended once, at its end")
        #expect(try db.query("SELECT -sum(delta_seconds) FROM ledger WHERE reason = 'spend'") == "4")
        #expect(try Self.ledgerProblems(db).isEmpty)
    }

    /// A "database" that completes TCP handshakes and never says a word (a hung server, a half-dead
    /// proxy): the helper gives up at its deadline and says so, instead of waiting for ever.
    @Test func a_helper_pointed_at_a_server_that_accepts_and_never_answers_gives_up_at_its_deadline() throws {
        let scratch = try Scratch()
        let silent = try SilentListener()
        defer { silent.close() }
        let config = try scratch.file("silent.toml", """
            [store]
            backend = "postgresql"
            url = "postgresql://scrolloff@127.0.0.1:\(silent.port)/postgres?sslmode=disable"
            node = "pg-silent"

            """)
        let started = Date()
        let outcome = try HelperLaunch(executable: Products.scrolloffDNS, stateDirectory: "\(scratch.path)/state",
                                       controlSocket: "\(scratch.path)/control.sock", config: config,
                                       wrappers: [.timeout(seconds: 30)], environment: ["TZ": "UTC"]).outcome()
        let took = Date().timeIntervalSince(started)
        #expect(outcome.exitCode != 0 && outcome.exitCode != 124, "\(outcome)")
        #expect(outcome.output.contains("household database") && outcome.output.contains("cannot be reached"), "\(outcome)")
        #expect(took < 15, "gave up after \(took) s")
    }

    /// SPEC §4 on the server: per profile, the wallet's batches add up to the ledger, and the
    /// ledger's running sum never dips below zero.
    static func ledgerProblems(_ db: TestPostgres) throws -> [String] {
        let rows = try db.query("""
            SELECT p.name, COALESCE((SELECT SUM(remaining) FROM wallet_batches b WHERE b.profile = p.name), 0),
                   COALESCE((SELECT SUM(delta_seconds) FROM ledger l WHERE l.profile = p.name), 0),
                   COALESCE((SELECT MIN(r) FROM (SELECT SUM(delta_seconds) OVER (ORDER BY id) AS r FROM ledger l WHERE l.profile = p.name) x), 0)
            FROM profiles p
            """)
        return rows.split(separator: "\n").compactMap { line in
            let f = line.split(separator: "|").map(String.init)
            guard f.count == 4 else { return "unreadable row \(line)" }
            if f[1] != f[2] { return "\(f[0]): balance \(f[1]) but the ledger adds up to \(f[2])" }
            if let lowest = Int(f[3]), lowest < 0 { return "\(f[0]): the ledger's running sum dips to \(lowest)" }
            return nil
        }
    }
}

/// Whether `condition` holds within `seconds`, looked at every 50 ms.
private func eventually(seconds: Double = 5, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        usleep(50_000)
    }
    return condition()
}

/// One helper of a two-resolver household: its own state folder, control socket and node name,
/// the household's state on `url`.
final class HouseholdNode: @unchecked Sendable {
    let name: String
    let child: Child
    let port: Int
    let address: String
    let controlSocket: String

    init(_ name: String, url: String, scratch: Scratch, upstream: Int, listen: String = "127.0.0.1", wrappers: [HelperLaunch.Wrapper] = [],
         environment: [String: String] = [:], label: String? = nil, settings: String = "") throws {
        self.name = name
        address = listen
        controlSocket = "\(scratch.path)/\(name).sock"
        let config = try scratch.file("\(name).toml", """
            [store]
            backend = "postgresql"
            url = "\(url)"
            node = "\(name)"

            \(settings)
            """)
        child = try HelperLaunch(
            executable: Products.scrolloffDNS, listen: ["\(listen):0"], upstreams: [HelperLaunch.loopback(upstream)],
            stateDirectory: "\(scratch.path)/\(name)-state", controlSocket: controlSocket, config: config, wrappers: wrappers,
            environment: ["TZ": "UTC"].merging(environment) { $1 }
        ).spawn(scratch: scratch, label: label ?? name)
        port = try child.listeningPort(on: listen)
        try child.waitForControlSocket()
    }

    func cli(_ arguments: [String]) throws -> Outcome {
        try runWithStatus(Products.scrolloff, arguments + ["--socket", controlSocket])
    }

    /// Whether this helper answers `name` with the blocking answer.
    func blocks(_ name: String) -> Bool {
        ((try? run("/usr/bin/dig", ["@\(address)", "-p", "\(port)", "+time=2", "+tries=1", "+short", name, "A"])) ?? "")
            .trimmingCharacters(in: .whitespacesAndNewlines) == "0.0.0.0"
    }

    func stop(signal: Int32 = SIGTERM) {
        guard child.isRunning else { return }
        child.signal(signal)
        child.process.wait()
    }
}

/// A network namespace (`scrolloff-pg-…`) joined to this one by a veth pair, and an nft table in
/// it (`scrolloff_pg_cut`) that drops the traffic to and from the database server's port.
final class CutNetwork: @unchecked Sendable {
    let namespace: String
    let hostAddress: String
    let namespaceAddress: String
    private let hostLink: String

    init() throws {
        let tag = String(UInt32.random(in: 0..<0xFFFF), radix: 16)
        let subnet = Int.random(in: 1...254)
        namespace = "scrolloff-pg-\(tag)"
        hostLink = "pgh\(tag)"
        hostAddress = "10.231.\(subnet).1"
        namespaceAddress = "10.231.\(subnet).2"
        do {
            try Self.sh("ip netns add \(namespace)",
                        "ip link add \(hostLink) type veth peer name pgn\(tag)",
                        "ip link set pgn\(tag) netns \(namespace)",
                        "ip addr add \(hostAddress)/24 dev \(hostLink)",
                        "ip link set \(hostLink) up",
                        "ip netns exec \(namespace) ip addr add \(namespaceAddress)/24 dev pgn\(tag)",
                        "ip netns exec \(namespace) ip link set pgn\(tag) up",
                        "ip netns exec \(namespace) ip link set lo up")
        } catch {
            remove()
            throw error
        }
    }

    /// Silently drops, inside the namespace, every packet to or from the database's port:
    /// connections hang rather than fail, as with a pulled cable. (DNS to the helper still passes.)
    func cut(port: Int) throws {
        try Self.sh("ip netns exec \(namespace) nft -f - <<'EOF'\n"
            + "table inet scrolloff_pg_cut {\n"
            + "  chain out { type filter hook output priority 0; ip daddr \(hostAddress) tcp dport \(port) drop; }\n"
            + "  chain in { type filter hook input priority 0; ip saddr \(hostAddress) tcp sport \(port) drop; }\n"
            + "}\nEOF")
    }

    func restore() throws {
        try Self.sh("ip netns exec \(namespace) nft delete table inet scrolloff_pg_cut")
    }

    /// Removes the namespace (its veth end, and with it the pair, and the nft table go with it).
    func remove() {
        _ = try? runWithStatus("/usr/sbin/ip", ["netns", "del", namespace])
        _ = try? runWithStatus("/usr/sbin/ip", ["link", "del", hostLink])
    }

    private static func sh(_ commands: String...) throws {
        for command in commands {
            let outcome = try runWithStatus("/bin/sh", ["-c", command])
            guard outcome.exitCode == 0 else { throw HarnessError("\(command): \(outcome)") }
        }
    }
}

/// A TCP listener on loopback that never accepts: the kernel completes every handshake into its
/// backlog and nothing ever answers.
final class SilentListener: @unchecked Sendable {
    let fd: Int32
    let port: Int

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        guard bound == 0, listen(fd, 16) == 0 else { Glibc.close(fd); throw HarnessError("cannot listen on loopback: \(errno)") }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        self.fd = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    func close() { Glibc.close(fd) }
}
