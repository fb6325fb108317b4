import ListFetch
import ScrollOffCore
import Testing

@Suite("RefreshPlan schedules refreshes without a clock")
struct RefreshPlanTests {
    let plan = RefreshPlan()
    let t0 = Instant(secondsSince1970: 1_790_000_000)

    @Test func never_tried_list_is_due_at_once() throws {
        let name = try ListName("ads")
        #expect(plan.nextRefresh(for: name, history: RefreshHistory()) == nil)
        #expect(plan.isDue(name, history: RefreshHistory(), now: t0))
    }

    @Test func after_success_next_refresh_is_a_period_plus_the_names_jitter() throws {
        let name = try ListName("ads")
        let history = RefreshHistory(lastSuccess: t0, lastAttempt: t0)
        let next = try #require(plan.nextRefresh(for: name, history: history))
        let jitter = plan.jitter(for: name, within: .hours(1))
        #expect(next == t0 + .hours(24) + jitter)
        #expect(jitter >= .zero && jitter < .hours(1))
        #expect(!plan.isDue(name, history: history, now: next - Span(milliseconds: 1)))
        #expect(plan.isDue(name, history: history, now: next))
    }

    @Test func jitter_is_the_same_on_every_run_and_spreads_names() throws {
        let names = try ["ads", "oisd", "stevenblack", "social", "news", "video", "gambling", "adult"].map { try ListName($0) }
        let first = names.map { plan.jitter(for: $0, within: .hours(1)) }
        let again = names.map { RefreshPlan().jitter(for: $0, within: .hours(1)) }
        #expect(first == again)
        #expect(Set(first).count == names.count)
        #expect(first.allSatisfy { $0 >= .zero && $0 < .hours(1) })
    }

    @Test(arguments: [(1, Span.hours(1)), (2, .hours(2)), (3, .hours(4)), (5, .hours(16)), (6, .hours(24)), (40, .hours(24))])
    func retry_delay_doubles_from_an_hour_up_to_the_period(failures: Int, expected: Span) {
        #expect(plan.retryDelay(consecutiveFailures: failures) == expected)
    }

    @Test func after_failure_retry_comes_sooner_than_the_period() throws {
        let name = try ListName("ads")
        let failedAt = t0 + .hours(24)
        let history = RefreshHistory(lastSuccess: t0, lastAttempt: failedAt, consecutiveFailures: 1)
        let next = try #require(plan.nextRefresh(for: name, history: history))
        // One hour plus a jitter of at most a quarter of that hour.
        #expect(next >= failedAt + .hours(1))
        #expect(next < failedAt + .minutes(75))
        #expect(next == failedAt + .hours(1) + plan.jitter(for: name, within: .minutes(15)))
    }

    @Test func failure_without_a_recorded_attempt_is_due_at_once() throws {
        #expect(plan.nextRefresh(for: try ListName("ads"), history: RefreshHistory(consecutiveFailures: 1)) == nil)
    }

    @Test(arguments: [(Span.hours(47), false), (.hours(48), false), (.hours(48) + Span(milliseconds: 1), true), (.hours(100), true)])
    func list_is_stale_after_two_periods_without_success(age: Span, stale: Bool) {
        #expect(plan.isStale(RefreshHistory(lastSuccess: t0, lastAttempt: t0), now: t0 + age) == stale)
    }

    @Test func list_that_never_succeeded_is_stale() {
        #expect(plan.isStale(RefreshHistory(lastAttempt: t0, consecutiveFailures: 3), now: t0))
    }

    @Test func shorter_period_caps_the_retry_delay() {
        let hourly = RefreshPlan(period: .hours(1), retryAfterFailure: .hours(2))
        #expect(hourly.retryAfterFailure == .hours(1))
        #expect(hourly.retryDelay(consecutiveFailures: 3) == .hours(1))
    }

    @Test func health_follows_the_history() throws {
        var metadata = ListMetadata(name: try ListName("ads"), url: "https://example.org/ads.txt")
        #expect(plan.health(of: metadata, now: t0) == .neverFetched)

        metadata.lastAttempt = t0
        metadata.consecutiveFailures = 1
        #expect(plan.health(of: metadata, now: t0) == .failing(servingLastGood: false))

        metadata.lastSuccess = t0
        metadata.lastChanged = t0
        metadata.consecutiveFailures = 0
        #expect(plan.health(of: metadata, now: t0 + .hours(1)) == .fresh)

        metadata.lastAttempt = t0 + .hours(25)
        metadata.consecutiveFailures = 1
        #expect(plan.health(of: metadata, now: t0 + .hours(25)) == .failing(servingLastGood: true))
        #expect(plan.health(of: metadata, now: t0 + .hours(49)) == .stale)
    }
}

@Suite("FetchPolicy back-off")
struct FetchPolicyTests {
    @Test(arguments: [(1, Span.seconds(5)), (2, .seconds(10)), (3, .seconds(20)), (4, .seconds(40)), (5, .seconds(60)), (99, .seconds(60))])
    func retry_delay_doubles_up_to_the_cap(failedAttempt: Int, expected: Span) {
        #expect(FetchPolicy().retryDelay(afterAttempt: failedAttempt) == expected)
    }

    @Test(arguments: [(Span.seconds(2), Span.seconds(5)), (.seconds(30), .seconds(30)), (.hours(2), .seconds(60))])
    func retry_after_lengthens_but_never_past_the_cap(retryAfter: Span, expected: Span) {
        #expect(FetchPolicy().retryDelay(afterAttempt: 1, retryAfter: retryAfter) == expected)
    }

    @Test func defaults_match_the_issue() {
        let policy = FetchPolicy()
        #expect(policy.maxBytes == 64 * 1024 * 1024)
        #expect(policy.maxRedirects == 5)
        #expect(policy.attempts == 3)
        #expect(policy.userAgent == "scrolloff/0.1.0 (+list refresh)")
    }
}
