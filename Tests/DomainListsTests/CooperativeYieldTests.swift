#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import DomainLists

/// `CooperativeYield`: a thread doing long list work with yield points on enters the scheduler at
/// the first point after each `interval`, so a woken event loop on its core waits for it about
/// that long at most (SPEC §9: a list refresh never stalls answers); elsewhere the points do
/// nothing.
@Suite struct CooperativeYieldTests {
    /// `body`'s result, computed on a new thread of its own (Swift's pool threads are shared, and
    /// yield points stay on for a thread's life).
    static func onNewThread<T>(_ body: @escaping () -> T) -> T {
        let box = ThreadBox(body)
        var thread = pthread_t()
        let created = pthread_create(&thread, nil, { raw in
            Unmanaged<AnyThreadBox>.fromOpaque(raw!).takeUnretainedValue().run()
            return nil
        }, Unmanaged.passUnretained(box as AnyThreadBox).toOpaque())
        precondition(created == 0, "a test thread")
        pthread_join(thread, nil)
        return box.result!
    }

    static func nanoseconds() -> UInt {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt(time.tv_sec) * 1_000_000_000 + UInt(time.tv_nsec)
    }

    /// Calls `point()` until `duration` nanoseconds of wall time have passed.
    static func spin(for duration: UInt) {
        let start = nanoseconds()
        while nanoseconds() - start < duration { CooperativeYield.point() }
    }

    @Test func yield_points_do_nothing_on_a_thread_that_did_not_turn_them_on() {
        let (enabled, yields) = Self.onNewThread {
            Self.spin(for: 3 * CooperativeYield.interval)
            return (CooperativeYield.isEnabledOnThisThread, CooperativeYield.yieldsOnThisThread)
        }
        #expect(!enabled)
        #expect(yields == 0)
    }

    @Test func a_thread_with_yield_points_on_yields_once_an_interval_has_passed_and_never_twice_within_one() {
        let (elapsed, yields) = Self.onNewThread {
            let start = Self.nanoseconds()
            CooperativeYield.enableOnThisThread()
            Self.spin(for: 10 * CooperativeYield.interval)
            // However long the machine kept the thread off its core, 10 intervals have passed
            // since the points were turned on: this point yields if none before it did.
            CooperativeYield.point()
            return (Self.nanoseconds() - start, CooperativeYield.yieldsOnThisThread)
        }
        #expect(yields >= 1)
        // The k-th yield comes k intervals after the points were turned on at the earliest.
        #expect(UInt(yields) <= elapsed / CooperativeYield.interval)
    }

    @Test func the_turn_on_is_per_thread() {
        let other = Self.onNewThread { () -> Bool in
            CooperativeYield.enableOnThisThread()
            return Self.onNewThread { CooperativeYield.isEnabledOnThisThread }
        }
        #expect(!other)
    }

    /// A list of `count` names, some with subdomains, in plain format.
    static func listText(_ count: Int, salt: String = "") -> String {
        (0..<count).map { "s\($0 % 97).name\($0)\(salt).yield-test.example\n" }.joined()
    }

    @Test func a_parse_a_difference_and_a_matcher_build_reach_their_yield_points_and_give_the_same_results() throws {
        let text = Self.listText(120_000)
        let changed = Self.listText(1_000, salt: "x") + text.split(separator: "\n").dropFirst(1_000).map { $0 + "\n" }.joined()
        func work() throws -> (rules: RuleList, dropped: RuleList, matcher: DomainMatcher, yields: [Int]) {
            var yields: [Int] = []
            let rules = try ListParser.parse(text).rules
            yields.append(CooperativeYield.yieldsOnThisThread)
            let newer = try ListParser.parse(changed).rules
            let dropped = rules.subtracting(newer)
            yields.append(CooperativeYield.yieldsOnThisThread)
            var builder = MatcherBuilder()
            builder.add(rules, entry: EntryIndex(1))
            let matcher = builder.build()
            yields.append(CooperativeYield.yieldsOnThisThread)
            return (rules, dropped, matcher, yields)
        }
        let plain = try Self.onNewThread { Result { try work() } }.get()
        let yielding = try Self.onNewThread { () -> Result<(rules: RuleList, dropped: RuleList, matcher: DomainMatcher, yields: [Int]), any Error> in
            CooperativeYield.enableOnThisThread()
            return Result { try work() }
        }.get()
        #expect(plain.yields == [0, 0, 0])
        // Each stage runs for well over an interval even in a release build, so each yields.
        #expect(yielding.yields[0] >= 1, "the parse yields")
        #expect(yielding.yields[1] > yielding.yields[0], "the second parse and the difference yield")
        #expect(yielding.yields[2] > yielding.yields[1], "the build yields")
        #expect(yielding.rules == plain.rules)
        #expect(yielding.dropped == plain.dropped)
        #expect(yielding.dropped.count == 1_000)
        let listed = "s\(99_999 % 97).name99999.yield-test.example"
        for name in ["s0.name0.yield-test.example", listed, "a." + listed, "s0.name0x.yield-test.example", "name0.yield-test.example"] {
            #expect(yielding.matcher.match(name) == plain.matcher.match(name), "\(name)")
        }
        #expect(yielding.matcher.match(listed) != .noMatch)
        #expect(yielding.matcher.match("a." + listed) != .noMatch, "a plain-format name blocks its subdomains")
        #expect(yielding.matcher.match("name0.yield-test.example") == .noMatch)
    }
}

/// What a test thread's C entry point calls without knowing the result's type.
class AnyThreadBox {
    func run() {}
}

/// A body to run on a test thread, and its result once it has run.
final class ThreadBox<T>: AnyThreadBox {
    let body: () -> T
    var result: T?
    init(_ body: @escaping () -> T) { self.body = body }
    override func run() { result = body() }
}
