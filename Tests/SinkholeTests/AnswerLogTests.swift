import DNSWire
import Testing
@testable import Sinkhole

/// The cache's log of answers (`AnswerLog`): what it finds must be what a plain dictionary with
/// oldest-first eviction would hold, through wraps, replacements, growth and compaction.
@Suite struct AnswerLogTests {
    static func key(_ index: Int, type: DNSType = .a) -> CacheKey {
        CacheKey(name: try! DNSName("n\(index).log.test").wireBytes[...], type: type, class: .in, flags: 0)
    }

    /// An answer for `key` whose size depends on `records` (address records of 16 octets each).
    static func answer(_ key: CacheKey, records: Int, receivedAt: UInt64 = 7) -> CachedAnswer {
        let name = try! DNSName(wireBytes: Array(key.name))
        let reply = DNSMessage(
            header: DNSHeader(id: 1, isResponse: true), questions: [DNSQuestion(name: name, type: key.type)],
            answers: (0..<records).map { .a(name, ttl: 300, IPv4Address(10, 0, UInt8($0 >> 8 & 0xFF), UInt8($0 & 0xFF))) })
        let question = OutgoingQuestion(name: Array(key.name), type: key.type, class: key.class, dnssecOK: false, checkingDisabled: false)
        return CachedAnswer.normalize(reply, question: question, receivedAt: receivedAt)
    }

    /// A reference model: the answers in the order stored, evicted oldest first by count and bytes.
    struct Model {
        var order: [(key: CacheKey, records: Int, bytes: Int)] = []
        var bytes: Int { order.reduce(0) { $0 + $1.bytes } }

        mutating func store(_ key: CacheKey, records: Int, bytes: Int, capacity: Int, budget: Int) {
            remove(key)
            guard bytes <= budget else { return }
            while !order.isEmpty, order.count >= capacity || self.bytes + bytes > budget { order.removeFirst() }
            order.append((key, records, bytes))
        }

        mutating func remove(_ key: CacheKey) { order.removeAll { $0.key == key } }
    }

    @Test func random_stores_replacements_and_removals_find_exactly_what_the_model_holds() throws {
        var generator = SystemRandomNumberGenerator()
        for (capacity, budget) in [(50, 50 * 512), (400, 20_000), (3, 100_000)] {
            let log = AnswerLog(byteBudget: budget)
            var model = Model()
            let keys = (0..<(capacity * 3)).flatMap { [Self.key($0, type: .a), Self.key($0, type: .aaaa)] }
            for step in 0..<6_000 {
                let key = keys.randomElement(using: &generator)!
                if Int.random(in: 0..<10, using: &generator) == 0 {
                    log.remove(key)
                    model.remove(key)
                } else {
                    // Mostly small answers, now and then one of several KiB (forces growth and wraps).
                    let records = Int.random(in: 0..<20, using: &generator) == 0 ? Int.random(in: 50..<400, using: &generator) : Int.random(in: 1..<4, using: &generator)
                    let answer = Self.answer(key, records: records)
                    let bytes = answer.wire.count + key.name.count
                    log.store(answer, key: key, expiresAt: UInt64(step), staleBase: UInt64(step), capacity: capacity, byteBudget: budget)
                    model.store(key, records: records, bytes: bytes, capacity: capacity, budget: budget)
                }
                #expect(log.count == model.order.count, "step \(step): \(log.count) answers held, the model holds \(model.order.count)")
                #expect(log.bytes == model.bytes, "step \(step)")
                if step % 97 == 0 || step > 5_950 {
                    // Every key the model holds is found with its own bytes; others are not found.
                    var parts = AnswerParts()
                    for entry in model.order {
                        guard let found = log.find(entry.key) else {
                            Issue.record("step \(step): a held answer is not found")
                            continue
                        }
                        log.copy(found.position, into: &parts)
                        #expect(parts.wire == Self.answer(entry.key, records: entry.records).wire)
                        #expect(parts.ttlOffsets.count == entry.records)
                    }
                    let held = Set(model.order.map(\.key))
                    for key in keys where !held.contains(key) {
                        #expect(log.find(key) == nil, "step \(step): an answer evicted or removed is found")
                    }
                }
            }
        }
    }

    @Test func a_copied_answer_replays_its_parts_exactly() throws {
        let log = AnswerLog(byteBudget: 1 << 20)
        let key = Self.key(1)
        let name = try DNSName("n1.log.test")
        let reply = DNSMessage(
            header: DNSHeader(id: 1, isResponse: true), questions: [DNSQuestion(name: name, type: .a)],
            answers: [
                DNSRecord(name: name, type: .cname, ttl: 60, rdata: .cname(try DNSName("Edge.CDN.test"))),
                .a(try DNSName("edge.cdn.test"), ttl: 30, IPv4Address(10, 1, 2, 3)),
            ])
        let question = OutgoingQuestion(name: Array(key.name), type: .a, class: .in, dnssecOK: false, checkingDisabled: false)
        let answer = CachedAnswer.normalize(reply, question: question, receivedAt: 42)
        log.store(answer, key: key, expiresAt: 99, staleBase: 100, capacity: 10, byteBudget: 1 << 20)
        let found = try #require(log.find(key))
        #expect(found.expiresAt == 99 && found.staleBase == 100)
        var parts = AnswerParts()
        log.copy(found.position, into: &parts)
        #expect(parts.wire == answer.parts.wire)
        #expect(parts.ttlOffsets == answer.parts.ttlOffsets)
        #expect(parts.cnameNames == Array(try DNSName("edge.cdn.test").wireBytes))
        #expect(parts.nameLength == answer.parts.nameLength && parts.questionEnd == answer.parts.questionEnd)
        #expect(parts.additionalStart == answer.parts.additionalStart && parts.receivedAt == 42 && !parts.isStale)
        let again = log.answer(at: found.position)
        #expect(again.rcode == answer.rcode && again.naturalLifetime == answer.naturalLifetime && again.isNegative == answer.isNegative)
        // Another type, the DO bit or another class is another question.
        var other = key
        other.flags = 1
        #expect(log.find(other) == nil)
        other = key
        other.type = .aaaa
        #expect(log.find(other) == nil)
    }

    /// The soak (bench/soak.sh): with the cache full and evicting, the memory it holds is the same after
    /// 10,000 and after 60,000 answers, whatever their sizes (no block per answer to fragment).
    @Test func a_full_log_evicting_mixed_sizes_holds_the_same_memory_throughout() throws {
        let log = AnswerLog(byteBudget: 1_000 * CacheConfiguration.averageAnswerBytes)
        var footprints: [Int] = []
        for index in 0..<60_000 {
            let key = Self.key(index)
            log.store(Self.answer(key, records: 1 + index % 7), key: key, expiresAt: 1, staleBase: 1, capacity: 1_000, byteBudget: 1_000 * 512)
            if index % 10_000 == 9_999 { footprints.append(log.footprint) }
        }
        #expect(log.count == 1_000)
        #expect(Set(footprints).count == 1, "footprints at every 10,000 answers: \(footprints)")
        // Its region holds about what the answers need: headers and offsets on top of their bytes.
        #expect(log.footprint < 4 * log.bytes + 128 * 1024, "\(log.footprint) bytes held for \(log.bytes) bytes of answers")
    }

    /// The soak's measure starts when the cache is full: by then the region must have its working
    /// size, or its last growth shows up as a step of half its size in the figures.
    @Test func the_region_reaches_its_working_size_while_the_cache_fills() throws {
        let capacity = 5_000
        let log = AnswerLog(byteBudget: capacity * CacheConfiguration.averageAnswerBytes)
        func store(_ index: Int) {
            // Same-length names, as most of a soak's are.
            let digits = String(index)
            let key = CacheKey(
                name: try! DNSName("n" + String(repeating: "0", count: 7 - digits.count) + digits + ".log.test").wireBytes[...],
                type: .a, class: .in, flags: 0)
            log.store(Self.answer(key, records: 1), key: key, expiresAt: 1, staleBase: 1, capacity: capacity, byteBudget: capacity * 512)
        }
        for index in 0..<capacity { store(index) }
        let whenFull = log.footprint
        for index in capacity..<(12 * capacity) { store(index) }
        #expect(log.count == capacity)
        #expect(log.footprint == whenFull, "\(whenFull) bytes when the cache was full, \(log.footprint) after 55,000 more answers")
    }

    @Test func an_answer_over_the_whole_budget_is_not_stored_and_drops_the_old_one() throws {
        let log = AnswerLog(byteBudget: 2_000)
        let key = Self.key(1)
        log.store(Self.answer(key, records: 1), key: key, expiresAt: 1, staleBase: 1, capacity: 10, byteBudget: 2_000)
        #expect(log.find(key) != nil)
        let stored = log.store(Self.answer(key, records: 200), key: key, expiresAt: 1, staleBase: 1, capacity: 10, byteBudget: 2_000)
        #expect(!stored)
        #expect(log.find(key) == nil && log.count == 0 && log.bytes == 0)
    }
}
