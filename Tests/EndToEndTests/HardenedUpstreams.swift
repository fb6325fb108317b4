import Foundation

/// dnsmasq as a plain upstream for load and failure tests: no query log (200,000 lines would cost
/// more than the queries), answers with a chosen TTL, no cache of its own.
final class QuietDnsmasq: @unchecked Sendable {
    let child: Child
    let port: Int

    /// - Parameter ttl: the TTL of every answer (`--local-ttl`); 0 = answers nobody may cache.
    init(scratch: Scratch, ttl: Int) throws {
        var lastError: (any Error)?
        for attempt in 0..<5 {
            let port = try FreePort.pick()
            let arguments = [
                "--no-daemon", "--conf-file=/dev/null", "--port=\(port)", "--listen-address=127.0.0.1", "--bind-interfaces",
                "--no-resolv", "--no-hosts", "--no-negcache", "--cache-size=0", "--local-ttl=\(ttl)", "--pid-file=",
                "--local=/test/", "--address=/fwd.test/10.1.2.3", "--host-record=ready.test,10.0.0.1",
                "--host-record=host.test,10.0.0.7",
            ]
            do {
                let started = try Child("/usr/sbin/dnsmasq", arguments, scratch: scratch, label: "quiet-dnsmasq-\(attempt)")
                try Dnsmasq.waitUntilAnswering(port: port, child: started)
                child = started
                self.port = port
                return
            } catch {
                lastError = error
            }
        }
        throw lastError ?? HarnessError("dnsmasq did not start")
    }

    /// Ends it at once, as a crash or a pulled cable would (no reply, no goodbye).
    func kill() {
        child.signal(SIGKILL)
        child.process.wait()
    }
}

/// A hostile network in dnspython: an upstream over UDP and TCP that answers A queries with
/// 192.0.2.1, while an attacker who knows the query's port (here: sees it, the strongest case)
/// sends forged answers of 6.6.6.6 from the upstream's own address and port.
/// Prints its port, then `QUERY udp|tcp name` per query received.
final class AttackedUpstream: @unchecked Sendable {
    enum Mode: String {
        /// Before the real answer, one forged answer for every one of the 65,536 IDs, with the
        /// question as the client asked it (lowercase: the attacker cannot know our random case).
        case flood
        /// No attacker; the upstream lowercases the question in its UDP replies, as a few old
        /// servers do. TCP replies echo the question as asked.
        case lowercase
    }

    let child: Child
    let port: Int

    static let script = """
    import socket, sys, threading, struct, time
    import dns.message, dns.rrset
    mode = sys.argv[1]
    \(PythonUpstreamPrelude.bindUDPAndTCP)
    \(PythonDNSTCP.functions)
    u.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 * 1024 * 1024)
    t.listen(64)
    print(port, flush=True)
    lock = threading.Lock()
    def answer(q, address):
        r = dns.message.make_response(q)
        r.answer.append(dns.rrset.from_text(q.question[0].name, 300, "IN", "A", address))
        return r
    def serve_udp(data, addr):
        q = dns.message.from_wire(data)
        print("QUERY udp", q.question[0].name.to_text(), flush=True)
        if mode == "flood":
            forged = dns.message.make_query(q.question[0].name.to_text().lower(), "A")
            wire = bytearray(answer(forged, "6.6.6.6").to_wire())
            with lock:
                for qid in range(65536):
                    struct.pack_into("!H", wire, 0, qid)
                    try:
                        u.sendto(wire, addr)
                    except OSError:
                        pass
                    # Paced to what the receiver can read (~20,000 a second): a faster flood only
                    # overflows its socket buffer, and the kernel drops the one forgery that fits.
                    if qid % 20 == 19:
                        time.sleep(0.001)
            print("FLOODED", addr[1], flush=True)
        r = answer(q, "192.0.2.1")
        wire = r.to_wire()
        if mode == "lowercase":
            lowered = dns.message.from_wire(wire)
            lowered.question[0].name = dns.name.from_text(q.question[0].name.to_text().lower())
            wire = lowered.to_wire()
        with lock:
            u.sendto(wire, addr)
    def serve_tcp(conn):
        with conn:
            while True:
                data = dns_tcp_read_frame(conn)
                if data is None:
                    return
                q = dns.message.from_wire(data)
                print("QUERY tcp", q.question[0].name.to_text(), flush=True)
                conn.sendall(dns_tcp_frame(answer(q, "192.0.2.1").to_wire()))
    def accept():
        while True:
            conn, _ = t.accept()
            threading.Thread(target=serve_tcp, args=(conn,), daemon=True).start()
    import dns.name
    threading.Thread(target=accept, daemon=True).start()
    while True:
        data, addr = u.recvfrom(4096)
        threading.Thread(target=serve_udp, args=(data, addr), daemon=True).start()
    """

    init(_ mode: Mode, scratch: Scratch) throws {
        let path = try scratch.file("attacked-\(UUID().uuidString).py", Self.script)
        child = try Child("/usr/bin/python3", ["-u", path, mode.rawValue], scratch: scratch, label: "attacked-\(UUID().uuidString)")
        let line = try child.waitForLine { Int($0) != nil }
        guard let port = Int(line) else { throw HarnessError("python upstream printed \(line)") }
        self.port = port
    }

    /// Query lines received so far, as `udp name` or `tcp name`.
    var queries: [String] {
        child.stdout.split(separator: "\n").filter { $0.hasPrefix("QUERY ") }.map { String($0.dropFirst(6)) }
    }

    /// Floods sent so far (one per UDP query in `flood` mode).
    var floods: Int { child.stdout.split(separator: "\n").filter { $0.hasPrefix("FLOODED") }.count }
}
