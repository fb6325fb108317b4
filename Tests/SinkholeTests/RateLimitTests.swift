import DNSWire
import Logging
import NIOCore
import Synchronization
import Testing
@testable import Sinkhole

/// The per-client rate limit in the real chain (`ResolverChain.standard`): a burst, then REFUSED,
/// refilled by time, each client on its own budget, in a table that never grows.
@Suite struct RateLimitTests {
    /// Monotonic nanoseconds the test moves by hand.
    final class ManualClock: Sendable {
        let nanoseconds = Atomic<UInt64>(1_000_000_000_000)
        func advance(milliseconds: UInt64) { nanoseconds.add(milliseconds * 1_000_000, ordering: .relaxed) }
        var read: @Sendable () -> UInt64 { { self.nanoseconds.load(ordering: .relaxed) } }
    }

    /// The standard chain with one blocked name, so every answer is local and no upstream is needed.
    static func chain(_ limiter: ClientRateLimiter) throws -> ResolverChain {
        let forwarder = Forwarder(
            configuration: ForwarderConfiguration(upstreams: [try SocketAddress(ipAddress: "127.0.0.1", port: 9)]),
            logger: Logger(label: "test"))
        let blocking = BlockingSettingsStore()
        return ResolverChain.standard(
            policies: PolicyStore(try TablePolicy(blocked: ["blocked.test"])),
            canaries: CanaryLink(blocking: blocking), blocking: blocking, rateLimiter: limiter,
            cache: AnswerCache(), forwarder: forwarder)
    }

    static func rcode(_ harness: ChainHarness, client: ClientAddress) throws -> DNSRcode? {
        guard let reply = try harness.run(try Packet.query("blocked.test"), client: client) else { return nil }
        return try Packet.parse(reply).rcode
    }

    static let loopback = ClientAddress.v4(0x7F00_0001)
    static let laptop = ClientAddress.v4(0xC0A8_0142)

    @Test(arguments: [(1, 5), (10, 1), (3, 20)])
    func a_burst_is_answered_then_the_next_query_is_refused(perSecond: Int, burst: Int) throws {
        let clock = ManualClock()
        let harness = ChainHarness(try Self.chain(ClientRateLimiter(RateLimit(queriesPerSecond: perSecond, burst: burst), clock: clock.read)))
        for index in 0..<burst {
            #expect(try Self.rcode(harness, client: Self.loopback) == .noError, "query \(index + 1) of the burst")
        }
        #expect(try Self.rcode(harness, client: Self.loopback) == .refused, "loopback clients are limited too")
    }

    @Test func tokens_refill_at_the_configured_rate() throws {
        let clock = ManualClock()
        let harness = ChainHarness(try Self.chain(ClientRateLimiter(RateLimit(queriesPerSecond: 2, burst: 4), clock: clock.read)))
        for _ in 0..<4 { #expect(try Self.rcode(harness, client: Self.laptop) == .noError) }
        #expect(try Self.rcode(harness, client: Self.laptop) == .refused)
        clock.advance(milliseconds: 499)
        #expect(try Self.rcode(harness, client: Self.laptop) == .refused, "half a second less a millisecond: no token yet")
        clock.advance(milliseconds: 1)
        #expect(try Self.rcode(harness, client: Self.laptop) == .noError, "one token after 1/2 s at 2 per second")
        #expect(try Self.rcode(harness, client: Self.laptop) == .refused)
        clock.advance(milliseconds: 60_000)
        for _ in 0..<4 { #expect(try Self.rcode(harness, client: Self.laptop) == .noError, "a long pause refills the whole burst, no more") }
        #expect(try Self.rcode(harness, client: Self.laptop) == .refused)
    }

    @Test func each_client_address_has_its_own_budget() throws {
        let clock = ManualClock()
        let harness = ChainHarness(try Self.chain(ClientRateLimiter(RateLimit(queriesPerSecond: 1, burst: 2), clock: clock.read)))
        for _ in 0..<2 { #expect(try Self.rcode(harness, client: Self.laptop) == .noError) }
        #expect(try Self.rcode(harness, client: Self.laptop) == .refused)
        let phone = ClientAddress.v6(high: 0xFD00_0000_0000_0000, low: 0x42)
        #expect(try Self.rcode(harness, client: phone) == .noError, "another device is not slowed by the laptop")
        #expect(try Self.rcode(harness, client: Self.loopback) == .noError)
    }

    @Test func many_clients_stay_within_the_fixed_table_and_new_ones_are_still_served() throws {
        let clock = ManualClock()
        let limiter = ClientRateLimiter(RateLimit(queriesPerSecond: 1, burst: 1), capacity: 256, clock: clock.read)
        let harness = ChainHarness(try Self.chain(limiter))
        for host in UInt32(0)..<20_000 {
            clock.advance(milliseconds: 1)
            #expect(try Self.rcode(harness, client: .v4(0x0A00_0000 | host)) == .noError, "client \(host) is new: it has a full bucket")
        }
        #expect(limiter.trackedClients <= limiter.capacity)
        #expect(limiter.capacity == 256)
        // The most recent client is still tracked: its one token is spent.
        #expect(try Self.rcode(harness, client: .v4(0x0A00_0000 | 19_999)) == .refused)
    }

    @Test func a_new_limit_applies_to_the_next_query_and_nil_turns_it_off() throws {
        let clock = ManualClock()
        let limiter = ClientRateLimiter(RateLimit(queriesPerSecond: 1, burst: 1), clock: clock.read)
        let harness = ChainHarness(try Self.chain(limiter))
        #expect(try Self.rcode(harness, client: Self.laptop) == .noError)
        #expect(try Self.rcode(harness, client: Self.laptop) == .refused)
        limiter.replace(with: nil)
        for _ in 0..<50 { #expect(try Self.rcode(harness, client: Self.laptop) == .noError) }
        limiter.replace(with: RateLimit(queriesPerSecond: 1, burst: 3))
        #expect(limiter.limit == RateLimit(queriesPerSecond: 1, burst: 3))
        clock.advance(milliseconds: 10_000)
        for _ in 0..<3 { #expect(try Self.rcode(harness, client: Self.laptop) == .noError) }
        #expect(try Self.rcode(harness, client: Self.laptop) == .refused)
    }
}
