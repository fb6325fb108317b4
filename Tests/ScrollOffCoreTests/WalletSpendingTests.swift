import Testing
@testable import ScrollOffCore

/// SPEC §4 spending: per second, stop, zero ends the grant, curfew, per-entry wallets and caps,
/// and grants resetting the earning hour.
struct WalletSpendingTests {
    let berlin = LocalClock("Europe/Berlin")

    /// A wallet holding `starter` seconds of starter credit (never expires, so tests stay simple).
    func funded(_ seconds: Int64, knobs: Knobs = Preset.strict.knobs, at t: Instant) -> WalletHarness {
        var k = knobs
        k.starterCredit = .seconds(seconds)
        var h = WalletHarness(k, start: t)
        h.record(h.wallet.grantStarter(at: t))
        return h
    }

    @Test func stop_charges_whole_elapsed_seconds_and_carries_the_fraction() throws {
        let t0 = berlin(2026, 11, 21, 20)
        var h = funded(420, at: t0)
        try h.use("instagram", at: t0)
        try h.stop(at: t0 + Span(milliseconds: 12_400))
        #expect(h.rows(.spend) == [LedgerRow(time: t0 + Span(milliseconds: 12_400), deltaSeconds: -12, reason: .spend, entry: "instagram")])
        #expect(h.wallet.state.unchargedMilliseconds == 400)
        #expect(h.balance == 408)
        // Nothing more is deducted after stop.
        h.advance(to: t0 + .minutes(30), block: false)
        #expect(h.balance == 408)
        // The carried 0.4 s plus 0.6 s of the next spend make exactly one charged second.
        let t1 = t0 + .hours(1)
        try h.use("instagram", at: t1)
        try h.stop(at: t1 + Span(milliseconds: 600))
        #expect(h.rows(.spend).last?.deltaSeconds == -1)
        #expect(h.wallet.state.unchargedMilliseconds == 0)
        #expect(h.balance == 407 && h.ledgerSum == 407)
    }

    @Test func spend_is_charged_as_it_runs_when_the_wallet_advances() throws {
        let t0 = berlin(2026, 11, 21, 20)
        var h = funded(600, at: t0)
        try h.use("youtube", at: t0)
        h.advance(to: t0 + .seconds(90), block: false)
        #expect(h.balance == 510)
        h.advance(to: t0 + .seconds(150), block: false)
        #expect(h.balance == 450)
        #expect(h.wallet.today(at: t0 + .seconds(150)).spentSeconds == 150)
    }

    @Test func zero_balance_ends_the_grant_at_the_exact_instant() throws {
        let t0 = berlin(2026, 11, 21, 20)
        var h = funded(120, at: t0)
        let g = try #require(try h.use("instagram", at: t0).grant)
        #expect(g.end == t0 + .seconds(120))
        #expect(h.wallet.nextDueInstant == t0 + .seconds(120))
        h.advance(to: t0 + .minutes(5), block: false)
        #expect(h.balance == 0)
        #expect(h.rows(.spend).map(\.time) == [t0 + .seconds(120)])
        #expect(h.wallet.runningSpend == nil)
        var ended = g
        ended.end = t0 + .seconds(120)
        #expect(h.events.last?.kind == .grantEnded(ended, reason: .fundsRanOut))
    }

    @Test func carried_fraction_shortens_the_next_grant_so_nothing_is_charged_twice() throws {
        let t0 = berlin(2026, 11, 21, 20)
        var h = funded(120, at: t0)
        try h.use("instagram", at: t0)
        try h.stop(at: t0 + Span(milliseconds: 10_400))
        #expect(h.balance == 110)
        let t1 = t0 + .minutes(1)
        let g = try #require(try h.use("instagram", at: t1).grant)
        #expect(g.end == t1 + Span(milliseconds: 109_600))
        h.advance(to: t1 + .minutes(3), block: false)
        #expect(h.balance == 0 && h.ledgerSum == 0)
        #expect(h.wallet.state.unchargedMilliseconds == 0)
    }

    @Test func for_limit_ends_the_grant_and_charges_exactly_that_long() throws {
        let t0 = berlin(2026, 11, 21, 20)
        var h = funded(600, at: t0)
        let g = try #require(try h.use("tiktok", for: .seconds(30), at: t0).grant)
        #expect(g.end == t0 + .seconds(30))
        h.advance(to: t0 + .minutes(1), block: false)
        #expect(h.balance == 570)
        guard case .grantEnded(_, let reason) = h.events.last?.kind else { Issue.record("no end event"); return }
        #expect(reason == .limitReached)
    }

    @Test func a_second_use_closes_the_running_spend_first() throws {
        let t0 = berlin(2026, 11, 21, 20)
        var h = funded(600, at: t0)
        try h.use("tiktok", at: t0)
        let g = try #require(try h.use("reddit", at: t0 + .seconds(40)).grant)
        #expect(h.wallet.grantsInUse.map(\.entry) == ["reddit"])
        #expect(h.balance == 560)
        #expect(g.end == t0 + .seconds(40) + .seconds(560))
    }

    @Test func spending_is_refused_during_a_curfew_with_its_end() throws {
        let t0 = berlin(2026, 11, 21, 23, 30)
        var h = funded(600, at: t0)
        let curfewEnd = berlin(2026, 11, 22, 7)
        #expect(throws: CreditError.self) { try h.use("instagram", at: t0, curfewEndsAt: curfewEnd) }
        do {
            try h.use("instagram", at: t0, curfewEndsAt: curfewEnd)
        } catch {
            #expect(error.refusal?.rule == .curfew)
            #expect(error.refusal?.opensAt == curfewEnd)
        }
        #expect(h.wallet.grantsInUse.isEmpty)
        #expect(h.balance == 600)
    }

    @Test func spending_with_no_credit_is_refused_until_the_next_award() {
        let t0 = berlin(2026, 11, 21, 9)
        var h = WalletHarness(start: t0)
        h.advance(to: t0)
        do {
            try h.use("instagram", at: t0 + .minutes(10))
            Issue.record("spend with no credit was allowed")
        } catch {
            #expect(error.refusal?.rule == .insufficientCredit)
            #expect(error.refusal?.opensAt == berlin(2026, 11, 21, 10))
        }
    }

    @Test func with_the_daily_cap_full_no_credit_refusal_opens_at_the_first_award_after_midnight() throws {
        let t0 = berlin(2026, 11, 21, 0)
        var h = WalletHarness(Knobs.strict { $0.rolloverDays = 0 }, start: t0)
        h.advance(to: t0)
        h.advance(to: berlin(2026, 11, 21, 9, 30))
        // Spends the day's 45 min from 09:30 to 10:15; the next hour of abstinence starts at 10:15.
        try h.use("instagram", for: .seconds(2700), at: berlin(2026, 11, 21, 9, 30))
        h.advance(to: berlin(2026, 11, 21, 10, 30), block: true)
        #expect(h.balance == 0)
        do {
            try h.use("instagram", at: berlin(2026, 11, 21, 10, 30))
            Issue.record("spend with no credit was allowed")
        } catch {
            #expect(error.refusal?.rule == .insufficientCredit)
            // Awards at 11:15 … 23:15 are over today's cap; the one at 00:15 is the first that adds credit.
            #expect(error.refusal?.opensAt == berlin(2026, 11, 22, 0, 15))
        }
        #expect(h.wallet.nextCreditAt == berlin(2026, 11, 22, 0, 15))
        h.advance(to: berlin(2026, 11, 21, 23, 30))
        #expect(h.wallet.nextCreditAt == berlin(2026, 11, 22, 0, 15))
        h.advance(to: berlin(2026, 11, 22, 0, 16))
        #expect(h.balance == 300, "the award named as opensAt really adds credit")
    }

    @Test func with_the_cap_full_an_award_landing_exactly_on_midnight_is_the_reopening_instant() throws {
        let t0 = berlin(2026, 11, 21, 0)
        var h = WalletHarness(Knobs.strict { $0.rolloverDays = 0 }, start: t0)
        h.advance(to: t0)
        // Nine hourly awards from 01:00 fill the 45 min cap by 09:00; later ones fall on whole hours.
        h.advance(to: berlin(2026, 11, 21, 12))
        #expect(h.balance == 2700)
        #expect(h.wallet.nextCreditAt == berlin(2026, 11, 22, 0))
    }

    @Test func non_positive_for_is_an_invalid_request() {
        var h = funded(600, at: berlin(2026, 11, 21, 9))
        #expect(throws: CreditError.self) { try h.use("x.com", for: .zero, at: berlin(2026, 11, 21, 9)) }
        do { try h.use("x.com", for: .seconds(-5), at: berlin(2026, 11, 21, 9)) } catch {
            guard case .invalid = error else { Issue.record("expected .invalid, got \(error)"); return }
        }
    }

    @Test func stop_with_nothing_open_is_refused_as_not_blocked() {
        var h = funded(600, at: berlin(2026, 11, 21, 9))
        #expect(throws: Refusal.self) { try h.stop("instagram", at: berlin(2026, 11, 21, 9)) }
    }

    @Test func midnight_expiry_shortens_a_running_spend() throws {
        var h = funded(120, at: berlin(2026, 11, 21, 22))
        h.advance(to: berlin(2026, 11, 21, 22))
        h.advance(to: berlin(2026, 11, 21, 23), block: false)
        #expect(h.balance == 420)
        let start = berlin(2026, 11, 21, 23, 58)
        let g = try #require(try h.use("instagram", at: start).grant)
        #expect(g.end == start + .seconds(420))
        h.advance(to: berlin(2026, 11, 22, 0, 1), block: false)
        // 120 s spent before midnight from today's batch; its other 180 s expire; the starter 120 s remain.
        #expect(h.rows(.expire).map(\.deltaSeconds) == [-180])
        #expect(h.wallet.runningSpend?.end == berlin(2026, 11, 22, 0, 2))
        #expect(h.wallet.today(at: berlin(2026, 11, 22, 0, 1)).spentSeconds == 60)
        h.advance(to: berlin(2026, 11, 22, 0, 10), block: false)
        #expect(h.balance == 0 && h.ledgerSum == 0)
    }

    @Test func using_a_grant_restarts_the_earning_hour_after_it() throws {
        let t0 = berlin(2026, 11, 21, 9)
        var h = funded(600, at: t0)
        h.advance(to: t0)
        try h.use("instagram", for: .minutes(1), at: berlin(2026, 11, 21, 9, 50))
        #expect(h.wallet.nextAwardAt == berlin(2026, 11, 21, 10, 51))
        h.advance(to: berlin(2026, 11, 21, 10, 50, 59))
        #expect(h.rows(.earn).isEmpty)
        h.advance(to: berlin(2026, 11, 21, 10, 51))
        #expect(h.rows(.earn).map(\.time) == [berlin(2026, 11, 21, 10, 51)])
    }

    @Test func stopping_early_restarts_the_earning_hour_at_the_stop() throws {
        let t0 = berlin(2026, 11, 21, 9)
        var h = funded(600, at: t0)
        h.advance(to: t0)
        try h.use("instagram", for: .minutes(10), at: berlin(2026, 11, 21, 9, 50))
        try h.stop(at: berlin(2026, 11, 21, 9, 52))
        #expect(h.wallet.nextAwardAt == berlin(2026, 11, 21, 10, 52))
    }

    // MARK: Per-entry wallets

    @Test func earmarked_credit_is_used_first_and_only_for_its_entry() throws {
        let t0 = berlin(2026, 11, 21, 9)
        var h = funded(600, knobs: Preset.flexible.knobs, at: t0)
        h.record(try h.wallet.earmark(200, for: "instagram", at: t0))
        #expect(h.wallet.earmarkedSeconds(for: "instagram") == 200)
        #expect(h.wallet.availableSeconds(for: "tiktok") == 400)
        #expect(h.balance == 600 && h.ledgerSum == 600)
        try h.use("instagram", for: .seconds(250), at: t0 + .minutes(1))
        h.advance(to: t0 + .minutes(10), block: false)
        #expect(h.wallet.earmarkedSeconds(for: "instagram") == 0)
        #expect(h.wallet.availableSeconds(for: "tiktok") == 350)
        let g = try #require(try h.use("tiktok", at: t0 + .minutes(20)).grant)
        #expect(g.end == t0 + .minutes(20) + .seconds(350))
    }

    @Test func earmark_is_refused_when_per_entry_wallets_are_off() {
        var h = funded(600, at: berlin(2026, 11, 21, 9))
        do {
            _ = try h.wallet.earmark(60, for: "instagram", at: berlin(2026, 11, 21, 9))
            Issue.record("earmark allowed with per-entry wallets off")
        } catch {
            guard case .invalid(let text) = error else { Issue.record("expected .invalid"); return }
            #expect(text.contains("per_entry_wallets"))
        }
    }

    @Test func releasing_an_earmark_returns_it_to_the_main_wallet() throws {
        let t0 = berlin(2026, 11, 21, 9)
        var h = funded(600, knobs: Preset.flexible.knobs, at: t0)
        h.record(try h.wallet.earmark(200, for: "instagram", at: t0))
        h.record(h.wallet.releaseEarmark(for: "instagram", at: t0))
        #expect(h.wallet.availableSeconds(for: "tiktok") == 600)
    }

    @Test func per_entry_daily_spend_cap_ends_the_grant_and_refuses_until_midnight() throws {
        var k = Preset.flexible.knobs
        k.perEntryDailySpendCap = .minutes(1)
        let t0 = berlin(2026, 11, 21, 9)
        var h = funded(600, knobs: k, at: t0)
        let g = try #require(try h.use("instagram", at: t0).grant)
        #expect(g.end == t0 + .seconds(60))
        h.advance(to: t0 + .minutes(5), block: false)
        do {
            try h.use("instagram", at: t0 + .minutes(5))
            Issue.record("spend beyond the per-entry cap was allowed")
        } catch {
            #expect(error.refusal?.rule == .entryDailySpendCap)
            #expect(error.refusal?.opensAt == berlin(2026, 11, 22, 0))
        }
        let other = try #require(try h.use("tiktok", at: t0 + .minutes(6)).grant)
        #expect(other.end == t0 + .minutes(6) + .seconds(60))
        h.advance(to: berlin(2026, 11, 22, 0), block: false)
        #expect(throws: Never.self) { try h.use("instagram", at: berlin(2026, 11, 22, 0)) }
    }

    // MARK: Adjustments

    @Test func adjustments_never_push_the_balance_below_zero() throws {
        let t0 = berlin(2026, 11, 21, 9)
        var h = funded(100, at: t0)
        #expect(throws: CreditError.self) { try h.wallet.adjust(-101, note: "oops", at: t0) }
        h.record(try h.wallet.adjust(-100, note: "correction", at: t0))
        #expect(h.balance == 0)
        h.record(try h.wallet.adjust(50, note: "goodwill", at: t0))
        h.advance(to: berlin(2026, 12, 31, 0), block: false)
        #expect(h.balance == 50 && h.ledgerSum == 50)
        #expect(h.rows(.adjust).map(\.deltaSeconds) == [-100, 50])
    }
}
