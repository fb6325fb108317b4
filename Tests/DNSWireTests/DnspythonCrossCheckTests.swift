import DNSWire
import Foundation
import Testing

// Cross-check against an independent implementation: dnspython (Debian's python3-dnspython)
// writes packets we parse, and parses packets we write.

/// Runs Debian's python with `script`, feeding `input` on stdin; returns stdout.
private func python(_ script: String, input: String = "") throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
    process.arguments = ["-c", script]
    let stdin = Pipe()
    let stdout = Pipe()
    let stderr = Pipe()
    process.standardInput = stdin
    process.standardOutput = stdout
    process.standardError = stderr
    try process.run()
    stdin.fileHandleForWriting.write(Data(input.utf8))
    try stdin.fileHandleForWriting.close()
    let output = stdout.fileHandleForReading.readDataToEndOfFile()
    let errors = stderr.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw HexFixtureError(description: "python3 failed (is python3-dnspython installed?): \(String(decoding: errors, as: UTF8.self))")
    }
    return String(decoding: output, as: UTF8.self)
}

private func bytes(fromHex text: Substring) throws -> [UInt8] { try hex(String(text)) }

@Test func packets_written_by_dnspython_parse_with_the_expected_fields() throws {
    let output = try python("""
        import dns.message, dns.rrset, dns.rcode, dns.edns, dns.name
        def out(tag, m): print(tag, m.to_wire().hex())
        q = dns.message.make_query("WwW.Example.COM.", "AAAA", id=4660, use_edns=0, payload=1232, want_dnssec=True)
        out("query", q)
        r = dns.message.make_response(dns.message.make_query("www.example.com.", "A", id=1))
        r.answer.append(dns.rrset.from_text("www.example.com.", 300, "IN", "CNAME", "edge.example.net."))
        r.answer.append(dns.rrset.from_text("edge.example.net.", 20, "IN", "A", "192.0.2.1", "192.0.2.2"))
        out("cname", r)
        n = dns.message.make_response(dns.message.make_query("nope.example.com.", "AAAA", id=2))
        n.set_rcode(dns.rcode.NXDOMAIN)
        n.authority.append(dns.rrset.from_text("example.com.", 900, "IN", "SOA", "ns1.example.com. host\\\\.master.example.com. 7 7200 3600 1209600 300"))
        out("nxdomain", n)
        b = dns.message.make_response(dns.message.make_query("x.example.", "A", id=3, use_edns=0))
        b.set_rcode(dns.rcode.BADVERS)
        out("badvers", b)
        e = dns.message.make_response(dns.message.make_query("tiktok.com.", "HTTPS", id=5, use_edns=0))
        e.use_edns(0, payload=1232, options=[dns.edns.EDEOption(dns.edns.EDECode.BLOCKED, "blocked until 18:00")])
        out("ede", e)
        h = dns.message.make_response(dns.message.make_query("example.org.", "HTTPS", id=6))
        rr = dns.rrset.from_text("example.org.", 300, "IN", "HTTPS", '1 . alpn="h2,h3"')
        h.answer.append(rr)
        out("https", h)
        print("httpsrdata", rr[0].to_wire().hex())
        w = dns.message.make_query(dns.name.from_text("a\\\\000b\\\\.c.example."), "TXT", id=8)
        out("escaped", w)
        """)
    var packets: [String: [UInt8]] = [:]
    for line in output.split(separator: "\n") {
        let parts = line.split(separator: " ")
        guard parts.count == 2 else { continue }
        packets[String(parts[0])] = try bytes(fromHex: parts[1])
    }
    #expect(packets.count == 8)

    let query = try DNSMessage(parsing: try #require(packets["query"]))
    #expect(query.header.id == 4660 && query.header.recursionDesired && !query.header.isResponse)
    #expect(query.questions == [DNSQuestion(name: try DNSName("www.example.com"), type: .aaaa)])
    #expect(query.questions.first?.name.description == "WwW.Example.COM")
    #expect(query.edns?.udpPayloadSize == 1232 && query.edns?.dnssecOK == true)
    var fast = DNSQuery()
    try fast.parse(try #require(packets["query"]))
    #expect(fast.edns == EDNSQueryInfo(udpPayloadSize: 1232, version: 0, dnssecOK: true))

    let cname = try DNSMessage(parsing: try #require(packets["cname"]))
    #expect(cname.answers.first == DNSRecord(
        name: try DNSName("www.example.com"), type: .cname, ttl: 300, rdata: .cname(try DNSName("edge.example.net"))))
    // dnspython shuffles the records of an RRset on the wire, so compare those as a set.
    #expect(Set(cname.answers.dropFirst()) == [
        .a(try DNSName("edge.example.net"), ttl: 20, IPv4Address(192, 0, 2, 1)),
        .a(try DNSName("edge.example.net"), ttl: 20, IPv4Address(192, 0, 2, 2)),
    ])

    let nxdomain = try DNSMessage(parsing: try #require(packets["nxdomain"]))
    #expect(nxdomain.rcode == .nameError)
    guard case .soa(let soa)? = nxdomain.authorities.first?.rdata else {
        Issue.record("no SOA in the authority section")
        return
    }
    #expect(soa.responsibleMailbox.description == "host\\.master.example.com")
    #expect(soa.serial == 7 && soa.minimum == 300)

    let badvers = try DNSMessage(parsing: try #require(packets["badvers"]))
    #expect(badvers.rcode == .badVersion)

    let ede = try DNSMessage(parsing: try #require(packets["ede"]))
    #expect(ede.edns?.extendedErrors == [ExtendedDNSError(infoCode: .blocked, extraText: "blocked until 18:00")])

    let https = try DNSMessage(parsing: try #require(packets["https"]))
    #expect(https.answers.first?.rdata == .unknown(try #require(packets["httpsrdata"])))

    let escaped = try DNSMessage(parsing: try #require(packets["escaped"]))
    #expect(escaped.questions.first?.name.description == "a\\000b\\.c.example")

    for (tag, packet) in packets where tag != "httpsrdata" {
        let message = try DNSMessage(parsing: packet)
        #expect(try DNSMessage(parsing: message.serialize()) == message, "\(tag)")
    }
}

@Test func packets_written_by_dnswire_parse_in_dnspython() throws {
    let blocked = try DNSName("TikTok.com")
    var messages: [DNSMessage] = []
    var reply = DNSMessage(
        header: DNSHeader(id: 77, isResponse: true, authoritative: true, recursionDesired: true, recursionAvailable: true),
        questions: [DNSQuestion(name: blocked, type: .a)],
        answers: [.a(blocked, ttl: 10, .any)],
        edns: EDNS(udpPayloadSize: 1232, dnssecOK: true, options: [ExtendedDNSError(infoCode: .blocked, extraText: "focus time").option]))
    messages.append(reply)
    reply = DNSMessage(
        header: DNSHeader(id: 78, isResponse: true, recursionDesired: true),
        rcode: .nameError,
        questions: [DNSQuestion(name: try DNSName("nope.example.com"), type: .aaaa)],
        authorities: [DNSRecord(
            name: try DNSName("example.com"), type: .soa, ttl: 900,
            rdata: .soa(SOAData(
                primaryNameServer: try DNSName("ns1.example.com"), responsibleMailbox: try DNSName("hostmaster.example.com"),
                serial: 7, refresh: 7200, retry: 3600, expire: 1_209_600, minimum: 300)))])
    messages.append(reply)
    reply = DNSMessage(
        header: DNSHeader(id: 79, isResponse: true),
        questions: [DNSQuestion(name: try DNSName("www.example.com"), type: .a)],
        answers: [
            DNSRecord(name: try DNSName("www.example.com"), type: .cname, ttl: 300, rdata: .cname(try DNSName("edge.example.com"))),
            .aaaa(try DNSName("edge.example.com"), ttl: 20, IPv6Address("2001:db8::1") ?? .any),
            DNSRecord(name: try DNSName("example.com"), type: .mx, ttl: 5, rdata: .mx(preference: 10, exchange: try DNSName("mail.example.com"))),
            DNSRecord(name: try DNSName("example.com"), type: .txt, ttl: 5, rdata: .txt([Array("hello".utf8), Array("world".utf8)])),
        ])
    messages.append(reply)
    reply = DNSMessage(header: DNSHeader(id: 80, isResponse: true), rcode: .badVersion, edns: EDNS())
    messages.append(reply)

    let input = try messages.map { toHex(try $0.serialize()) }.joined(separator: "\n")
    let output = try python("""
        import sys, dns.message, dns.rcode, dns.flags, dns.edns
        for line in sys.stdin.read().split():
            m = dns.message.from_wire(bytes.fromhex(line))
            print("id", m.id, dns.flags.to_text(m.flags), dns.rcode.to_text(m.rcode()))
            for q in m.question: print("q", q.to_text())
            for s, name in ((m.answer, "an"), (m.authority, "ns")):
                for rrset in s:
                    for l in rrset.to_text().split("\\n"): print(name, l)
            if m.edns >= 0:
                print("edns", m.edns, m.payload, dns.flags.edns_to_text(m.ednsflags))
                for o in m.options:
                    if isinstance(o, dns.edns.EDEOption): print("ede", int(o.code), o.text)
        """, input: input)
    let expected = """
        id 77 QR AA RD RA NOERROR
        q TikTok.com. IN A
        an TikTok.com. 10 IN A 0.0.0.0
        edns 0 1232 DO
        ede 15 focus time
        id 78 QR RD NXDOMAIN
        q nope.example.com. IN AAAA
        ns example.com. 900 IN SOA ns1.example.com. hostmaster.example.com. 7 7200 3600 1209600 300
        id 79 QR NOERROR
        q www.example.com. IN A
        an www.example.com. 300 IN CNAME edge.example.com.
        an edge.example.com. 20 IN AAAA 2001:db8::1
        an example.com. 5 IN MX 10 mail.example.com.
        an example.com. 5 IN TXT "hello" "world"
        id 80 QR BADVERS
        edns 0 1232 \n
        """
    #expect(output.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        == expected.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) })
}
