import DNSWire

/// The 0x20 bits (draft-vixie-dnsext-dns0x20): each ASCII letter of a name in a random case.
package enum CaseRandomizer {
    package static func randomized(_ name: DNSName) -> DNSName {
        var wire = name.wireBytes
        var bits = UInt64.random(in: .min ... .max)
        var used = 0
        var position = 0
        while position < wire.count, wire[position] != 0 {
            let end = position + 1 + Int(wire[position])
            for index in position + 1..<min(end, wire.count) {
                let byte = wire[index] | 0x20
                guard byte >= 0x61, byte <= 0x7A else { continue }
                if used == 64 {
                    bits = UInt64.random(in: .min ... .max)
                    used = 0
                }
                wire[index] = bits & 1 == 1 ? byte & ~0x20 : byte
                bits >>= 1
                used += 1
            }
            position = end
        }
        // Only letters changed, so the name is still valid; fall back to it unchanged otherwise.
        return (try? DNSName(wireBytes: wire)) ?? name
    }
}
