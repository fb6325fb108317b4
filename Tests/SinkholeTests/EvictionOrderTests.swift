import DNSWire
import NIOCore
import NIOEmbedded
import Testing
@testable import Sinkhole

/// The cache's eviction order: a ring allocated once (issue 11 soak, README "Soak").
@Suite struct EvictionOrderTests {
    static func key(_ index: Int) -> CacheKey {
        CacheKey(name: ArraySlice(Array("n\(index)".utf8)), type: .a, class: .in, flags: 0)
    }

    @Test func pairs_come_out_oldest_first_across_the_ring_edge() {
        var order = EvictionOrder(slots: 4)
        for index in 0..<3 { order.append(Self.key(index), serial: UInt64(index)) }
        #expect(order.popOldest()?.serial == 0)
        #expect(order.popOldest()?.serial == 1)
        for index in 3..<6 { order.append(Self.key(index), serial: UInt64(index)) }
        #expect(order.isFull)
        #expect((0..<4).compactMap { _ in order.popOldest()?.serial } == [2, 3, 4, 5])
        #expect(order.popOldest() == nil)
    }

    @Test func compaction_keeps_the_live_pairs_in_order_and_frees_the_rest() {
        var order = EvictionOrder(slots: 5)
        for index in 0..<3 { order.append(Self.key(index), serial: UInt64(index)) }
        _ = order.popOldest()
        for index in 3..<6 { order.append(Self.key(index), serial: UInt64(index)) }  // wraps around
        #expect(order.isFull)
        order.compact { $0.serial % 2 == 0 }
        #expect(order.count == 2)
        order.append(Self.key(7), serial: 7)
        #expect((0..<3).compactMap { _ in order.popOldest()?.serial } == [2, 4, 7])
    }

    /// A popped or dropped pair must not keep its key's name buffer alive (issue 11: stored keys
    /// pinned name buffers long after their answers were evicted).
    @Test func a_popped_or_compacted_key_releases_its_name_buffer() {
        var order = EvictionOrder(slots: 8)
        var popped = Array("popped".utf8)
        var dropped = Array("dropped".utf8)
        let before = (popped.withUnsafeBufferPointer { $0.baseAddress }, dropped.withUnsafeBufferPointer { $0.baseAddress })
        order.append(CacheKey(name: popped[...], type: .a, class: .in, flags: 0), serial: 1)
        order.append(CacheKey(name: dropped[...], type: .a, class: .in, flags: 0), serial: 2)
        _ = order.popOldest()
        order.compact { _ in false }
        #expect(order.count == 0)
        // Copy-on-write: a write copies the buffer only if the ring still refers to it.
        popped[0] = 0
        dropped[0] = 0
        #expect(popped.withUnsafeBufferPointer { $0.baseAddress } == before.0, "a popped slot still holds the key")
        #expect(dropped.withUnsafeBufferPointer { $0.baseAddress } == before.1, "a compacted slot still holds the key")
    }

    /// Issue 11 soak (TTL 3600, cache full): the order list was an array that grew by appending
    /// and was rebuilt by `filter`, a new multi-MiB block every ~capacity answers. It must stay
    /// within the ring allocated with the cache while expired names come back and new ones evict.
    @Test func a_full_cache_with_returning_and_new_names_stays_within_its_ring() throws {
        let loop = EmbeddedEventLoop()
        let cache = AnswerCache(configuration: CacheConfiguration(capacity: 1_000))
        let slots = AnswerCache.State.orderSlots(capacity: 1_000)
        for index in 0..<20_000 {
            // First 800 names again and again, each back after its answer expired (a stale pair
            // for the old one), then new names that fill the cache and evict.
            let nameIndex = index < 10_000 ? index % 800 : index
            var query = DNSQuery()
            try query.parse(try Packet.query("n\(nameIndex).fwd.test"))
            guard case .miss(let promise) = cache.lookup(CacheKey(query), now: UInt64(index) * 1_000_000_000, on: loop) else {
                continue
            }
            let name = try DNSName("n\(nameIndex).fwd.test")
            let reply = DNSMessage(
                header: DNSHeader(id: 1, isResponse: true), questions: [DNSQuestion(name: name, type: .a)],
                answers: [.a(name, ttl: 300, IPv4Address(10, 0, 0, 1))])
            promise.succeed(.normalize(reply, question: OutgoingQuestion(query), receivedAt: UInt64(index) * 1_000_000_000))
            #expect(cache.orderLength <= slots)
        }
        #expect(cache.count == 1_000)
    }
}
