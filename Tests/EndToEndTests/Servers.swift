import Foundation
import TestSupport

/// The real `scrolloff-dns start` on 127.0.0.1:0, with `blocklist` blocked the way a person
/// blocks names: `scrolloff block NAME…` (each a custom-domain entry, blocked around the clock,
/// with its subdomains), through the engine's one decision path.
final class Sinkhole: @unchecked Sendable {
    let child: Child
    let port: Int
    let controlSocket: String
    /// Who runs the helper: the CLI runs as the same user, since it trusts no socket served by
    /// anyone but root and itself (SPEC §11).
    let mode: PrivilegeMode

    /// - Parameters:
    ///   - mode: who runs the helper (root, an ordinary user, root under the unit's capabilities).
    ///   - wrapper: programs put in front, such as `prlimit --nofile=300:300` (before the mode's `setpriv`).
    init(
        scratch: Scratch, upstreams: [Int], blocklist: [String] = [], extra: [String] = [], mode: PrivilegeMode = .root,
        wrapper: [HelperLaunch.Wrapper] = []
    ) throws {
        // Each helper owns its database and control socket: a second helper on the same ones is
        // refused at start (one writer, one socket), and some tests run two side by side.
        let instance = UUID().uuidString
        self.mode = mode
        let state: String
        if mode == .ordinaryUser {
            // The scratch folder is root's: the user gets a folder of its own for state and socket.
            let folder = try mode.privateFolder(in: scratch, name: "u-\(instance.prefix(8))")
            state = "\(folder)/state"
            controlSocket = "\(folder)/control.sock"
        } else {
            state = "\(scratch.path)/state-\(instance)"
            controlSocket = "\(scratch.path)/control-\(instance).sock"
        }
        let launch = HelperLaunch(
            executable: Products.scrolloffDNS, upstreams: upstreams.map(HelperLaunch.loopback), stateDirectory: state,
            controlSocket: controlSocket, extra: extra, wrappers: wrapper)
        child = try mode.applied(to: launch).spawn(scratch: scratch, label: "sinkhole-\(UUID().uuidString)")
        let port = try child.listeningPort()
        let tcp = try child.listeningPort("tcp")
        guard tcp == port else { throw HarnessError("the helper listens on udp \(port) but tcp \(tcp)") }
        self.port = port
        // The control socket is put in place (renamed in, already listening) after DNS listens: a
        // CLI call made at once may find none on a loaded machine. A fresh path, so no stale file.
        try Self.waitForSocketFile(controlSocket, child: child)
        if !blocklist.isEmpty {
            let blocked = try cli(["block"] + blocklist)
            guard blocked.exitCode == 0 else { throw HarnessError("scrolloff block \(blocklist) failed: \(blocked)") }
        }
    }

    static func waitForSocketFile(_ path: String, child: Child, seconds: Double = 15) throws {
        let deadline = Date().addingTimeInterval(seconds)
        var status = stat()
        while stat(path, &status) != 0 || status.st_mode & S_IFMT != S_IFSOCK {
            // A helper that stops at start on purpose (a firewall it may not apply) is the test's
            // to look at: only a running helper is waited for.
            guard child.isRunning else { return }
            guard Date() < deadline else { throw HarnessError("no control socket at \(path) after \(seconds) s: \(child.stderr.suffix(2_000))") }
            usleep(20_000)
        }
    }

    /// Runs the CLI against this helper's control socket.
    func cli(_ arguments: [String]) throws -> Outcome {
        if mode == .ordinaryUser, geteuid() == 0 {
            return try runWithStatus("/usr/bin/setpriv", [
                "--reuid=\(PrivilegeMode.ordinaryUID)", "--regid=\(PrivilegeMode.ordinaryGID)", "--clear-groups", Products.scrolloff,
            ] + arguments + ["--socket", controlSocket])
        }
        return try runWithStatus(Products.scrolloff, arguments + ["--socket", controlSocket])
    }
}

/// dnsmasq serving a small test zone, logging every query it receives.
final class Dnsmasq: @unchecked Sendable {
    let child: Child
    let port: Int
    let logPath: String

    static let bigTXT = (0..<6).map { index in String(repeating: Character(String(index)), count: 250) }

    init(scratch: Scratch) throws {
        var lastError: (any Error)?
        for attempt in 0..<5 {
            let port = try FreePort.pick()
            let log = "\(scratch.path)/dnsmasq-\(port).log"
            let arguments = [
                "--no-daemon", "--conf-file=/dev/null", "--port=\(port)", "--listen-address=127.0.0.1", "--bind-interfaces",
                "--no-resolv", "--no-hosts", "--no-negcache", "--local-ttl=300", "--log-queries", "--log-facility=\(log)",
                "--pid-file=", "--local=/test/",
                "--address=/fwd.test/10.1.2.3",
                "--host-record=host.test,10.0.0.7",
                // A name of a curated service (blocklists/services/instagram.list), for the CLI tests.
                "--host-record=www.instagram.com,10.20.30.40",
                "--host-record=ready.test,10.0.0.1",
                "--host-record=cdn.tracker.test,10.9.9.9",
                "--cname=innocent.test,cdn.tracker.test",
                "--mx-host=mx.test,mail.mx.test,10",
                "--txt-record=big.test," + Self.bigTXT.joined(separator: ","),
            ]
            do {
                let started = try Child("/usr/sbin/dnsmasq", arguments, scratch: scratch, label: "dnsmasq-\(attempt)")
                try Self.waitUntilAnswering(port: port, child: started)
                child = started
                self.port = port
                logPath = log
                return
            } catch {
                lastError = error
            }
        }
        throw lastError ?? HarnessError("dnsmasq did not start")
    }

    static func waitUntilAnswering(port: Int, child: Child) throws {
        for _ in 0..<100 {
            if try dig(port, ["+short", "ready.test"]).contains("10.0.0.1") { return }
            guard child.isRunning else { throw HarnessError("dnsmasq exited: \(child.stderr)") }
            Thread.sleep(forTimeInterval: 0.05)
        }
        throw HarnessError("dnsmasq on port \(port) does not answer")
    }

    /// How many queries for `name` (any type, or `type`) dnsmasq has received.
    func queries(for name: String, type: String? = nil) -> Int {
        let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        return log.split(separator: "\n").filter { line in
            guard let range = line.range(of: "query[") else { return false }
            let rest = line[range.upperBound...]
            guard let close = rest.firstIndex(of: "]") else { return false }
            let qtype = rest[..<close]
            let qname = rest[rest.index(after: close)...].split(separator: " ").first ?? ""
            // The forwarder sends names in a random letter case (0x20), so dnsmasq logs them so.
            return qname.lowercased() == name.lowercased() && (type == nil || qtype == type!)
        }.count
    }
}

/// A scripted upstream in dnspython: answers A queries with 192.0.2.1 and misbehaves as told.
/// It prints its port first, then one line per query it receives (`QUERY name type edns do`).
/// Python for test upstreams that serve UDP and TCP on one port: after it, `u` and `t` are bound
/// (TCP not yet listening) and `port` is theirs. Interpolate it at the script's top level.
enum PythonUpstreamPrelude {
    static let bindUDPAndTCP = """
    # UDP and TCP on one port: a free UDP port may be taken for TCP, so try until both bind.
    while True:
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        u.bind(("127.0.0.1", 0))
        port = u.getsockname()[1]
        t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            t.bind(("127.0.0.1", port))
            break
        except OSError:
            u.close()
            t.close()
    """
}

final class ScriptedUpstream: @unchecked Sendable {
    enum Behaviour: String {
        /// Before the real answer: a reply with the wrong ID, one from another port, one for another question.
        case spoof
        /// Never answers.
        case silent
        /// FORMERR to any query with EDNS; answers those without.
        case formerrOnEDNS = "formerr"
        /// Answers after 400 ms, so concurrent questions overlap.
        case slow
        /// Answers at once; names starting with `missing` get NXDOMAIN with an SOA (RFC 2308).
        case plain
    }

    let child: Child
    let port: Int

    static let script = """
    import socket, sys, time, threading
    import dns.message, dns.rrset, dns.rcode, dns.name
    mode = sys.argv[1]
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    other = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    other.bind(("127.0.0.1", 0))
    print(s.getsockname()[1], flush=True)
    def answer(q, address):
        r = dns.message.make_response(q)
        r.answer.append(dns.rrset.from_text(q.question[0].name, 60, "IN", "A", address))
        return r
    def serve(data, addr):
        q = dns.message.from_wire(data)
        print("QUERY", q.question[0].name.to_text(), q.question[0].rdtype, q.edns, 1 if q.ednsflags & 0x8000 else 0, flush=True)
        if mode == "silent":
            return
        if mode == "formerr" and q.edns >= 0:
            r = dns.message.make_response(q)
            r.use_edns(False)
            r.set_rcode(dns.rcode.FORMERR)
            s.sendto(r.to_wire(), addr)
            return
        if mode == "spoof":
            bad = answer(q, "6.6.6.1"); bad.id = (q.id + 1) % 65536
            s.sendto(bad.to_wire(), addr)
            other.sendto(answer(q, "6.6.6.3").to_wire(), addr)
            wrong = dns.message.make_query("other.test", "A"); wrong.id = q.id
            w = answer(wrong, "6.6.6.4"); w.id = q.id
            s.sendto(w.to_wire(), addr)
            time.sleep(0.1)
        if mode == "slow":
            time.sleep(0.4)
        if q.question[0].name.to_text().lower().startswith("missing"):
            r = dns.message.make_response(q)
            r.set_rcode(dns.rcode.NXDOMAIN)
            r.authority.append(dns.rrset.from_text("test.", 300, "IN", "SOA", "ns.test. h.test. 1 1 1 1 60"))
            s.sendto(r.to_wire(), addr)
            return
        s.sendto(answer(q, "192.0.2.1").to_wire(), addr)
    while True:
        data, addr = s.recvfrom(4096)
        threading.Thread(target=serve, args=(data, addr), daemon=True).start()
    """

    init(_ behaviour: Behaviour, scratch: Scratch) throws {
        let path = try scratch.file("upstream-\(UUID().uuidString).py", Self.script)
        child = try Child("/usr/bin/python3", ["-u", path, behaviour.rawValue], scratch: scratch, label: "upstream-\(UUID().uuidString)")
        let line = try child.waitForLine { Int($0) != nil }
        guard let port = Int(line) else { throw HarnessError("python upstream printed \(line)") }
        self.port = port
    }

    /// Query lines received so far.
    var queries: [String] { child.stdout.split(separator: "\n").filter { $0.hasPrefix("QUERY") }.map(String.init) }
}
