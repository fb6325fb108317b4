import DNSWire
import NIOCore
import NIOEmbedded
import Testing
@testable import Sinkhole

/// The cache is bounded in bytes as well as in answers (SPEC §9: a big answer costs more than a
/// small one, so a bound in entries alone does not bound memory).
@Suite struct CacheByteBudgetTests {
    /// Stores one answer for each name: a TXT answer of `txtOctets` octets, or an A answer.
    static func fill(_ cache: AnswerCache, names: Range<Int>, txtOctets: Int?) throws {
        let loop = EmbeddedEventLoop()
        for index in names {
            let type: DNSType = txtOctets == nil ? .a : .txt
            var query = DNSQuery()
            try query.parse(try Packet.query("n\(index).big.test", type))
            guard case .miss(let promise) = cache.lookup(CacheKey(query), now: 1, on: loop) else { continue }
            let name = try DNSName("n\(index).big.test")
            let record: DNSRecord
            if let txtOctets {
                // Character-strings of at most 255 octets (RFC 1035 §3.3.14).
                let strings = stride(from: 0, to: txtOctets, by: 255).map { [UInt8](repeating: 0x61, count: min(255, txtOctets - $0)) }
                record = DNSRecord(name: name, type: .txt, ttl: 300, rdata: .txt(strings))
            } else {
                record = .a(name, ttl: 300, IPv4Address(10, 0, 0, 1))
            }
            let reply = DNSMessage(
                header: DNSHeader(id: 1, isResponse: true), questions: [DNSQuestion(name: name, type: type)], answers: [record])
            promise.succeed(.normalize(reply, question: OutgoingQuestion(query), receivedAt: 1))
        }
    }

    @Test func big_answers_fill_the_byte_budget_before_the_entry_bound() throws {
        let cache = AnswerCache(configuration: CacheConfiguration(capacity: 1_000))
        try Self.fill(cache, names: 0..<3_000, txtOctets: 4_000)
        let budget = cache.configuration.byteBudget
        #expect(budget == 1_000 * CacheConfiguration.averageAnswerBytes)
        #expect(cache.bytesHeld <= budget, "\(cache.bytesHeld) bytes held against a budget of \(budget)")
        // Each answer is over 4,000 octets: about budget / 4,000 of them fit, far fewer than 1,000.
        #expect(cache.count > budget / 4_200 - 5 && cache.count <= budget / 4_000, "\(cache.count) answers kept")
        // The newest are the ones kept.
        try Self.fill(cache, names: 2_999..<3_000, txtOctets: 4_000)
        #expect(cache.statistics.hits == 1)
    }

    @Test func small_answers_reach_the_entry_bound_within_the_byte_budget() throws {
        let cache = AnswerCache(configuration: CacheConfiguration(capacity: 1_000))
        try Self.fill(cache, names: 0..<3_000, txtOctets: nil)
        #expect(cache.count == 1_000)
        #expect(cache.bytesHeld > 0 && cache.bytesHeld <= cache.configuration.byteBudget)
    }

    /// Every entry's bytes are given back as it leaves: emptied by evicting everything through
    /// new names of another size, the account matches what is held.
    @Test func the_byte_account_follows_evictions_and_replacements() throws {
        let cache = AnswerCache(configuration: CacheConfiguration(capacity: 100))
        try Self.fill(cache, names: 0..<500, txtOctets: 300)
        let heldBig = cache.bytesHeld
        try Self.fill(cache, names: 1_000..<1_100, txtOctets: nil)
        #expect(cache.count == 100)
        #expect(cache.bytesHeld < heldBig / 3, "\(cache.bytesHeld) bytes after every big answer was evicted (\(heldBig) before)")
        cache.reconfigure(cache.configuration)
        #expect(cache.bytesHeld == 0 && cache.count == 0)
    }
}
