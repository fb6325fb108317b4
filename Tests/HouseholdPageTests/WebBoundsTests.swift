@testable import HouseholdPage
import NIOCore
import Sinkhole
import Synchronization
import Testing

/// The household page's bounds as pure values: which connection a full pool drops, how
/// devices are counted, and how sign-in tries per owner name wait. The same bounds against the
/// real helper: `HouseholdWebSlowClientEndToEndTests`.
@Suite("Household page bounds")
struct WebBoundsTests {
    static func address(_ text: String) throws -> SocketAddress { try SocketAddress(ipAddress: text, port: 40000) }

    /// A connection's closer that records it was called.
    final class Closed: Sendable {
        private let names = Mutex<[String]>([])
        func closer(_ name: String) -> @Sendable () -> Void { { self.names.withLock { $0.append(name) } } }
        var all: [String] { names.withLock { $0 } }
    }

    @Test func ipv6_addresses_of_one_64_are_one_device_and_an_ipv4_mapped_address_is_its_ipv4() throws {
        let limit = WebConnectionLimit(perClient: 2, total: 100)
        let closed = Closed()
        var admitted = 0
        for (index, text) in ["2001:db8:1:2::1", "2001:db8:1:2:ffff:1:2:3", "2001:db8:1:2::99"].enumerated() {
            if case .admitted = limit.admit(try Self.address(text), now: UInt64(index), close: closed.closer(text)) { admitted += 1 }
        }
        #expect(admitted == 2, "the third address of the /64 is over its device's 2")
        guard case .admitted = limit.admit(try Self.address("2001:db8:1:3::1"), now: 9, close: closed.closer("other")) else {
            Issue.record("another /64 is another device")
            return
        }
        #expect(limit.count(for: ClientAddress(try Self.address("2001:db8:1:2::abcd"))) == 2)
        #expect(WebConnectionLimit.key(ClientAddress(try Self.address("::ffff:192.0.2.7"))) == ClientAddress(try Self.address("192.0.2.7")))
        #expect(WebConnectionLimit.key(ClientAddress(try Self.address("192.0.2.7"))) == ClientAddress(try Self.address("192.0.2.7")))
        // Two IPv4 devices are never one, mapped or not.
        #expect(WebConnectionLimit.key(ClientAddress(try Self.address("::ffff:192.0.2.8"))) != WebConnectionLimit.key(ClientAddress(try Self.address("::ffff:192.0.2.7"))))
        #expect(closed.all.isEmpty)
    }

    /// A home LAN is one /64: its devices are told apart by the MAC the neighbour table knows,
    /// so one device using up its share leaves another of the same /64 its own.
    @Test func a_device_the_neighbour_table_knows_counts_by_its_mac_and_an_unknown_address_by_its_64() throws {
        let guesser = ClientAddress(try Self.address("fd77::a:1")), owner = ClientAddress(try Self.address("fd77::2"))
        let macs: [ClientAddress: UInt64] = [guesser: 0x02_00_00_00_0a_01, owner: 0x02_00_00_00_00_02]
        let limit = WebConnectionLimit(perClient: 2, total: 100, macOf: { macs[$0] })
        #expect(limit.device(guesser) == .mac(0x02_00_00_00_0a_01))
        #expect(limit.device(guesser).description == "MAC 02:00:00:00:0a:01")
        #expect(limit.device(guesser) != limit.device(owner))
        // Addresses the table does not know (off-link): their /64, whatever the address.
        let offLink = limit.device(ClientAddress(try Self.address("fd77::3")))
        #expect(offLink == .network(ClientAddress(try Self.address("fd77::"))))
        #expect(offLink == limit.device(ClientAddress(try Self.address("fd77::ffff:1"))))
        #expect(limit.device(ClientAddress(try Self.address("192.0.2.7"))) == .network(ClientAddress(try Self.address("192.0.2.7"))))

        let closed = Closed()
        for now in 0..<3 { _ = limit.admit(try Self.address("fd77::a:1"), now: UInt64(now), close: closed.closer("guesser")) }
        #expect(limit.count(for: guesser) == 2)
        guard case .admitted = limit.admit(try Self.address("fd77::2"), now: 5, close: closed.closer("owner")) else {
            Issue.record("another MAC in the same /64 is another device")
            return
        }
        #expect(limit.count(for: owner) == 1)
    }

    @Test func a_full_pool_drops_the_longest_idle_then_the_longest_arriving_and_never_one_being_answered() throws {
        let limit = WebConnectionLimit(perClient: 10, total: 3)
        let closed = Closed()
        func admit(_ name: String, at now: UInt64) throws -> WebConnectionLimit.Admission {
            limit.admit(try Self.address("192.0.2.\(name.unicodeScalars.first!.value % 200)"), now: now, close: closed.closer(name))
        }
        guard case .admitted(let a, nil) = try admit("a", at: 1), case .admitted(let b, nil) = try admit("b", at: 2),
              case .admitted(let c, nil) = try admit("c", at: 3) else { Issue.record("room for three"); return }
        a.enter(.answering, now: 4)
        b.enter(.idle, now: 10)
        c.enter(.idle, now: 5)
        guard case .admitted(let d, let evicted) = try admit("d", at: 11) else { Issue.record("d was refused"); return }
        #expect(evicted === c && closed.all == ["c"], "c has been idle longest")
        // No idle one: the request arriving longest goes (d connected at 11 and sent nothing).
        b.enter(.receiving, now: 12)
        guard case .admitted(let e, let second) = try admit("e", at: 13) else { Issue.record("e was refused"); return }
        #expect(second === d && closed.all == ["c", "d"])
        // Every slot answering a request: the newcomer is refused, nothing is dropped.
        b.enter(.answering, now: 14)
        e.enter(.answering, now: 14)
        guard case .refused(.full) = try admit("f", at: 15) else { Issue.record("f was let in"); return }
        #expect(closed.all == ["c", "d"] && limit.count == 3)
        // A dropped connection's own close gives nothing back twice.
        limit.release(c)
        limit.release(d)
        #expect(limit.count == 3)
        limit.release(a)
        #expect(limit.count == 2)
    }

    @Test func sign_in_waits_double_after_three_wrong_passwords_up_to_the_cap_and_the_right_one_ends_them() async {
        let backoff = SignInBackoff(policy: .init(freeTries: 3, firstDelay: .seconds(1), maximumDelay: .seconds(300)))
        var delays: [Int64] = []
        for tries in 1...14 { delays.append(await backoff.delay(after: tries).components.seconds) }
        #expect(delays == [0, 0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300, 300], "\(delays)")
        // Three at once, then each try only once the last one's wait is over, and no sooner.
        var now = ContinuousClock.now
        for _ in 0..<3 { #expect(await backoff.begin("alex", owner: true, now: now) == nil) }
        for (tries, wait) in [(3, 1), (4, 2), (5, 4), (6, 8)] {
            #expect(await backoff.begin("alex", owner: true, now: now + .milliseconds(1)) == .init(seconds: wait, failures: tries))
            now = now + .seconds(Int64(wait))
            #expect(await backoff.begin("alex", owner: true, now: now) == nil)
        }
        now = now + .seconds(6)
        // Tries during the wait are refused and do not lengthen it.
        #expect(await backoff.begin("alex", owner: true, now: now)?.seconds == 10)
        #expect(await backoff.begin("alex", owner: true, now: now + .seconds(9))?.seconds == 1)
        // Another name is not held back by this one.
        #expect(await backoff.begin("sam", owner: true, now: now) == nil)
        // The right password (the handler says so) ends the wait for good.
        await backoff.succeeded("alex")
        #expect(await backoff.begin("alex", owner: true, now: now) == nil)
        #expect(await backoff.begin("alex", owner: true, now: now) == nil)
        // A name left alone for an hour starts afresh.
        for _ in 0..<5 { _ = await backoff.begin("sam", owner: true, now: now + .seconds(400)) }
        #expect(await backoff.begin("sam", owner: true, now: now + .seconds(400)) != nil)
        #expect(await backoff.begin("sam", owner: true, now: now + .seconds(400 + 3601)) == nil)
    }

    @Test func the_sign_in_table_stays_bounded_under_a_spray_of_names_and_keeps_the_owners_wait() async {
        let backoff = SignInBackoff()
        let now = ContinuousClock.now
        for _ in 0..<6 { _ = await backoff.begin("alex", owner: true, now: now) }
        let before = await backoff.begin("alex", owner: true, now: now)
        #expect(before != nil)
        for i in 0..<(SignInBackoff.maximumTracked * 5) {
            for _ in 0..<4 { _ = await backoff.begin("made-up-\(i)", owner: false, now: now) }
        }
        #expect(await backoff.tracked <= SignInBackoff.maximumTracked)
        #expect(await backoff.begin("alex", owner: true, now: now) == before, "the owner's wait survived the spray")
    }
}
