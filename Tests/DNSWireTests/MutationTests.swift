import DNSWire
import TestSupport
import Testing

// A small deterministic cousin of the libFuzzer target that runs in every `swift test`: damaged
// copies of the seed packets must give a typed error or a message that round-trips.

private let seedNames = [
    "query-a.bin", "query-aaaa-cookie.bin", "query-https-edns-do.bin", "response-blocked-ede.bin",
    "response-cname-chain.bin", "response-https.bin", "response-mx-txt.bin", "response-nxdomain-soa.bin",
]

private func seed(_ name: String) throws -> [UInt8] {
    let directory = #filePath.split(separator: "/").dropLast().joined(separator: "/")
    return try readFile("/" + directory + "/corpus/" + name)
}

@Test(arguments: seedNames)
func every_strict_prefix_of_a_seed_packet_is_a_typed_error(name: String) throws {
    let packet = try seed(name)
    for length in 0..<packet.count {
        #expect(throws: DNSWireError.self, "prefix of \(length) octets") {
            try DNSMessage(parsing: Array(packet[..<length]))
        }
    }
}

@Test(arguments: seedNames)
func bit_flips_of_a_seed_packet_parse_and_round_trip_or_fail_typed(name: String) throws {
    let packet = try seed(name)
    var generator = SplitMix64(seed: 0x5C_0011_0FF)
    var parsed = 0
    for _ in 0..<2_000 {
        var damaged = packet
        for _ in 0..<Int(generator.next() % 3 + 1) {
            let index = Int(generator.next() % UInt64(damaged.count))
            damaged[index] ^= UInt8(truncatingIfNeeded: 1 << (generator.next() % 8))
        }
        guard let message = try? DNSMessage(parsing: damaged) else { continue }
        parsed += 1
        let written = try message.serialize()
        #expect(try DNSMessage(parsing: written) == message, "input \(toHex(damaged))")
        var query = DNSQuery()
        if message.questions.count == 1 {
            try query.parse(damaged)
            #expect(query.question == message.questions[0], "input \(toHex(damaged))")
        }
    }
    // Flips in IDs, TTLs and addresses leave valid packets: the round-trip check must have run.
    #expect(parsed > 100)
}
