#!/usr/bin/python3
"""Writes the DNSWire fuzz seed corpus (Tests/DNSWireTests/corpus) with dnspython.

A few real-world shaped queries and replies give libFuzzer valid structure to mutate from.
Run with Debian's python: /usr/bin/python3 scripts/fuzz-seeds.py
"""
import os
import dns.edns
import dns.flags
import dns.message
import dns.rcode
import dns.rrset

out = os.path.join(os.path.dirname(__file__), "..", "Tests", "DNSWireTests", "corpus")
os.makedirs(out, exist_ok=True)


def save(name, message):
    with open(os.path.join(out, name), "wb") as f:
        f.write(message.to_wire())


q = dns.message.make_query("www.Example.com.", "A", id=0x1234)
save("query-a.bin", q)
save("query-https-edns-do.bin", dns.message.make_query("example.org.", "HTTPS", use_edns=0, payload=1232, want_dnssec=True, id=7))
save("query-aaaa-cookie.bin", dns.message.make_query("a.b.c.example.", "AAAA", use_edns=0,
     options=[dns.edns.GenericOption(10, bytes(range(8)))], id=9))

r = dns.message.make_response(dns.message.make_query("www.example.com.", "A", use_edns=0, id=1))
r.answer.append(dns.rrset.from_text("www.example.com.", 300, "IN", "CNAME", "edge.example.net."))
r.answer.append(dns.rrset.from_text("edge.example.net.", 60, "IN", "CNAME", "e1.cdn.example.net."))
r.answer.append(dns.rrset.from_text("e1.cdn.example.net.", 20, "IN", "A", "192.0.2.1", "192.0.2.2"))
save("response-cname-chain.bin", r)

n = dns.message.make_response(dns.message.make_query("nope.example.com.", "AAAA", id=2))
n.set_rcode(dns.rcode.NXDOMAIN)
n.authority.append(dns.rrset.from_text("example.com.", 900, "IN", "SOA",
                   "ns1.example.com. hostmaster.example.com. 2024010101 7200 3600 1209600 300"))
save("response-nxdomain-soa.bin", n)

h = dns.message.make_response(dns.message.make_query("example.org.", "HTTPS", use_edns=0, id=3))
h.answer.append(dns.rrset.from_text("example.org.", 300, "IN", "HTTPS", '1 . alpn="h2,h3" ipv4hint=192.0.2.7'))
save("response-https.bin", h)

m = dns.message.make_response(dns.message.make_query("example.net.", "MX", id=4))
m.answer.append(dns.rrset.from_text("example.net.", 300, "IN", "MX", "10 mail.example.net.", "20 mx2.example.net."))
m.answer.append(dns.rrset.from_text("example.net.", 300, "IN", "TXT", '"v=spf1 -all"', '"two" "strings"'))
m.additional.append(dns.rrset.from_text("mail.example.net.", 300, "IN", "AAAA", "2001:db8::25"))
save("response-mx-txt.bin", m)

b = dns.message.make_response(dns.message.make_query("tiktok.com.", "A", use_edns=0, id=5))
b.use_edns(0, options=[dns.edns.EDEOption(dns.edns.EDECode.BLOCKED, "Scroll Off: blocked until 18:00")])
b.answer.append(dns.rrset.from_text("tiktok.com.", 10, "IN", "A", "0.0.0.0"))
save("response-blocked-ede.bin", b)
