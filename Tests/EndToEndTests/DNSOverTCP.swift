/// DNS over TCP in the tests' Python (RFC 1035 §4.2.2: each message after its length in two
/// octets, big-endian): one copy of the framing for the clients that ask the helper and the
/// scripted upstreams that answer it. (`TCPLimitsEndToEndTests` keeps its own for now.)
enum PythonDNSTCP {
    /// Interpolate at a script's top level. `dns_tcp_frame(wire)` is a message with its length in
    /// front; `dns_tcp_read_frame(sock)` reads one whole message, or gives None when the peer
    /// closes before all of it came (a `recv` may return part of the length, too).
    static let functions = """
    import struct
    def dns_tcp_frame(wire):
        return struct.pack(">H", len(wire)) + wire
    def dns_tcp_read_exact(sock, n):
        data = b""
        while len(data) < n:
            chunk = sock.recv(n - len(data))
            if not chunk:
                return None
            data += chunk
        return data
    def dns_tcp_read_frame(sock):
        head = dns_tcp_read_exact(sock, 2)
        if head is None:
            return None
        return dns_tcp_read_exact(sock, struct.unpack(">H", head)[0])
    """

    /// A client for ``python(_:_:scratch:)``: the A queries for `names` in one segment on one
    /// connection, then each name with its reply's rcode and address (`-` for none), in order.
    static func pipelined(_ names: [String]) -> String {
        """
        import socket, dns.message
        \(functions)
        names = [\(names.map { "\"\($0)\"" }.joined(separator: ", "))]
        queries = [dns.message.make_query(n, "A") for n in names]
        t = socket.create_connection(("127.0.0.1", PORT), timeout=5)
        t.sendall(b"".join(dns_tcp_frame(q.to_wire()) for q in queries))
        ids = {}
        for _ in queries:
            wire = dns_tcp_read_frame(t)
            if wire is None:
                raise SystemExit("closed")
            r = dns.message.from_wire(wire)
            ids[r.id] = r
        for q in queries:
            r = ids[q.id]
            print(q.question[0].name, r.rcode(), r.answer[0][0].address if r.answer else "-")
        """
    }
}
