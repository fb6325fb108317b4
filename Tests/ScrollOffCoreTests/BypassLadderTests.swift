import Testing
import Foundation
@testable import ScrollOffCore

/// SPEC §5: the ladder of free peeks, paid peeks and tokens, lockouts, curfews, midnight resets.
struct BypassLadderTests {
    let berlin = LocalClock("Europe/Berlin")

    /// An account in `zone` holding `starter` seconds of never-expiring credit.
    func account(_ knobs: Knobs = Preset.strict.knobs, zone: String = "Europe/Berlin", credit: Int64 = 600,
                 at t: Instant) -> (CreditAccount, [LedgerRow]) {
        var k = knobs
        k.starterCredit = .seconds(credit)
        var a = CreditAccount(state: CreditAccountState(asOf: t),
                              policy: CreditPolicy(knobs: k, calendar: LocalCalendar(identifier: zone)!))
        let rows = a.grantStarter(at: t).rows
        return (a, rows)
    }

    static let fiveTokens = Knobs.strict { $0.includedTokensPerMonth = 5 }

    @Test func third_peek_of_the_day_costs_60s_and_the_fourth_needs_a_token() throws {
        var (a, _) = account(Self.fiveTokens, at: berlin(2026, 11, 21, 12))
        let expected: [(LedgerRow.Reason, Int64)] = [(.bypassFree, 0), (.bypassCredit, -60), (.bypassCredit, -60)]
        for (i, (reason, delta)) in expected.enumerated() {
            let t = berlin(2026, 11, 21, 12, 10 * i)
            let out = try a.peek("instagram", at: t)
            #expect(out.rows.map(\.reason) == [reason], "peek \(i + 1)")
            #expect(out.rows.map(\.deltaSeconds) == [delta], "peek \(i + 1)")
            #expect(out.grant?.kind == .peek)
            #expect(out.grant?.end == t + .seconds(60))
        }
        #expect(a.wallet.balanceSeconds == 480)
        #expect(a.ladder.nextStep(at: berlin(2026, 11, 21, 12, 30), policy: a.policy) == .tokenOnly)
        #expect(throws: Refusal(rule: .peeksUsedUp, subject: "instagram", opensAt: berlin(2026, 11, 22, 0),
                                message: "All 3 peeks of today are used; they come back at midnight. An emergency token (5 left this month) still opens it for 10 min.")) {
            try a.peek("instagram", at: berlin(2026, 11, 21, 12, 30))
        }
        let token = try a.token("instagram", at: berlin(2026, 11, 21, 12, 30))
        #expect(token.rows == [LedgerRow(time: berlin(2026, 11, 21, 12, 30), deltaSeconds: 0, reason: .bypassToken,
                                         entry: "instagram", note: "token 1 of 5 this month")])
        #expect(token.grant?.end == berlin(2026, 11, 21, 12, 40))
    }

    @Test func next_step_walks_free_then_paid_then_token_only() throws {
        var (a, _) = account(at: berlin(2026, 11, 21, 12))
        let t = berlin(2026, 11, 21, 12)
        #expect(a.ladder.nextStep(at: t, policy: a.policy) == .freePeek)
        _ = try a.peek("reddit", at: t)
        #expect(a.ladder.nextStep(at: t, policy: a.policy) == .paidPeek(costSeconds: 60))
        #expect(a.status(at: t).peeksLeftToday == 2)
    }

    @Test func paid_peek_without_enough_credit_is_refused_and_not_counted() throws {
        var (a, _) = account(credit: 59, at: berlin(2026, 11, 21, 12))
        _ = try a.peek("reddit", at: berlin(2026, 11, 21, 12))
        do {
            _ = try a.peek("tiktok", at: berlin(2026, 11, 21, 12, 5))
            Issue.record("paid peek without credit was allowed")
        } catch {
            #expect(error.rule == .insufficientCredit)
        }
        #expect(a.status(at: berlin(2026, 11, 21, 12, 5)).peeksLeftToday == 2)
        #expect(a.wallet.balanceSeconds == 59)
    }

    @Test func sixth_token_of_a_month_is_refused_until_the_first() throws {
        var (a, _) = account(Self.fiveTokens, at: berlin(2026, 11, 3, 8))
        for i in 0 ..< 5 {
            _ = try a.token("youtube", at: berlin(2026, 11, 3 + i, 9))
        }
        #expect(a.status(at: berlin(2026, 11, 20, 9)).tokensLeftThisMonth == 0)
        do {
            _ = try a.token("youtube", at: berlin(2026, 11, 20, 9))
            Issue.record("sixth token was allowed")
        } catch {
            #expect(error.rule == .tokensUsedUp)
            #expect(error.opensAt == berlin(2026, 12, 1, 0))
        }
    }

    @Test(arguments: [Preset.strict, Preset.balanced])
    func a_preset_without_tokens_names_the_knob_and_no_reopening_instant(preset: Preset) throws {
        var (a, _) = account(preset.knobs, at: berlin(2026, 11, 21, 8))
        do {
            _ = try a.token("youtube", at: berlin(2026, 11, 21, 9))
            Issue.record("a token was allowed on a preset that includes none")
        } catch {
            #expect(error.rule == .tokensUsedUp)
            #expect(error.opensAt == nil, "no 1st of a month brings tokens on this preset")
            // The knob as spelled in the configuration, and the preset that includes tokens.
            #expect(error.message.contains("set tokens_per_month (up to 5)"), "\(error.message)")
            #expect(error.message.contains("flexible preset, which includes 3 a month"), "\(error.message)")
            #expect(!error.message.contains("0 of 0"))
        }
    }

    @Test func tokens_come_back_on_the_first_of_the_month() throws {
        var (a, _) = account(Self.fiveTokens, at: berlin(2026, 12, 27, 8))
        for i in 0 ..< 5 { _ = try a.token("x", at: berlin(2026, 12, 27 + i, 9)) }
        do {
            _ = try a.token("x", at: berlin(2026, 12, 31, 23, 59, 59))
            Issue.record("sixth token was allowed")
        } catch {
            // December rolls over into January of the next year.
            #expect(error.opensAt == berlin(2027, 1, 1, 0))
        }
        let out = try a.token("x", at: berlin(2027, 1, 1, 0))
        #expect(out.rows.first?.note == "token 1 of 5 this month")
    }

    @Test func included_tokens_knob_sets_the_monthly_allowance() throws {
        var (a, _) = account(Preset.flexible.knobs, at: berlin(2026, 11, 1, 8))
        #expect(a.status(at: berlin(2026, 11, 1, 8)).tokensLeftThisMonth == 3)
        var (strict, _) = account(Preset.strict.knobs, at: berlin(2026, 11, 1, 8))
        #expect(throws: Refusal.self) { try strict.token("x", at: berlin(2026, 11, 1, 9)) }
        for d in 1 ... 3 { _ = try a.token("x", at: berlin(2026, 11, d, 9)) }
        #expect(throws: Refusal.self) { try a.token("x", at: berlin(2026, 11, 4, 9)) }
    }

    struct LockoutCase: Sendable, CustomTestStringConvertible {
        var kind: Grant.Kind
        var length: Span
        var testDescription: String { "\(kind)" }
    }

    @Test(arguments: [LockoutCase(kind: .peek, length: .seconds(60)), LockoutCase(kind: .token, length: .minutes(10))])
    func lockout_lasts_twice_the_bypass_length_after_it_ends(_ c: LockoutCase) throws {
        var (a, _) = account(Self.fiveTokens, at: berlin(2026, 11, 21, 12))
        let t0 = berlin(2026, 11, 21, 12)
        func bypass(_ entry: EntryID, _ t: Instant) throws(Refusal) -> CreditOutcome {
            c.kind == .peek ? try a.peek(entry, at: t) : try a.token(entry, at: t)
        }
        _ = try bypass("instagram", t0)
        let opens = t0 + c.length + c.length * 2
        do {
            _ = try bypass("instagram", opens - Span(milliseconds: 1))
            Issue.record("bypass inside the lockout was allowed")
        } catch {
            #expect(error.rule == .bypassLockout)
            #expect(error.opensAt == opens)
        }
        // Other entries are not locked.
        _ = try bypass("tiktok", t0 + c.length)
        #expect(try bypass("instagram", opens).grant?.start == opens)
    }

    struct ZoneCase: Sendable, CustomTestStringConvertible {
        var zone: String
        var testDescription: String { zone }
    }

    /// Counters follow the profile's midnight, not UTC's: in Los Angeles UTC midnight is 16:00,
    /// in Tokyo it is 09:00.
    @Test(arguments: [ZoneCase(zone: "America/Los_Angeles"), ZoneCase(zone: "Asia/Tokyo")])
    func peek_counters_reset_at_local_midnight_not_utc(_ c: ZoneCase) throws {
        let local = LocalClock(c.zone)
        let utc = LocalClock("UTC")
        // Use every peek of the 21st in the hour before UTC midnight…
        let utcMidnight = utc(2026, 11, 22, 0)
        var (a, _) = account(zone: c.zone, at: utcMidnight - .hours(1))
        for i in 0 ..< 3 { _ = try a.peek("reddit", at: utcMidnight - .minutes(50 - 10 * Int64(i))) }
        let localDayOfUTCMidnight = LocalCalendar(identifier: c.zone)!.day(of: utcMidnight)
        let nextLocalMidnight = local(localDayOfUTCMidnight.year, localDayOfUTCMidnight.month, localDayOfUTCMidnight.day + 1)
        // …then UTC midnight passes and nothing resets…
        let afterUTC = utcMidnight + .minutes(5)
        if afterUTC < nextLocalMidnight {
            #expect(throws: Refusal.self) { try a.peek("reddit", at: afterUTC) }
        }
        // …until local midnight, when the free peek is back.
        #expect(throws: Refusal.self) { try a.peek("reddit", at: nextLocalMidnight - Span(milliseconds: 1)) }
        let out = try a.peek("reddit", at: nextLocalMidnight)
        #expect(out.rows.map(\.reason) == [.bypassFree])
    }

    @Test func nothing_opens_during_a_curfew_and_nothing_is_counted() throws {
        var (a, _) = account(Self.fiveTokens, at: berlin(2026, 11, 21, 23))
        let t = berlin(2026, 11, 21, 23, 30)
        let end = berlin(2026, 11, 22, 7)
        let attempts: [(String, () throws -> Void)] = [
            ("spend", { _ = try a.use("instagram", at: t, curfewEndsAt: end) }),
            ("peek", { _ = try a.peek("instagram", at: t, curfewEndsAt: end) }),
            ("token", { _ = try a.token("instagram", at: t, curfewEndsAt: end) }),
        ]
        for (name, attempt) in attempts {
            do {
                try attempt()
                Issue.record("\(name) opened an entry during a curfew")
            } catch let error as Refusal {
                #expect(error.rule == .curfew, "\(name)")
                #expect(error.opensAt == end, "\(name)")
            } catch let error as CreditError {
                #expect(error.refusal?.rule == .curfew, "\(name)")
                #expect(error.refusal?.opensAt == end, "\(name)")
            }
        }
        let status = a.status(at: t)
        #expect(status.grantsInUse.isEmpty)
        #expect(status.peeksLeftToday == 3)
        #expect(status.tokensLeftThisMonth == 5)
        #expect(status.balanceSeconds == 600)
    }

    struct EarnCase: Sendable, CustomTestStringConvertible {
        var kind: Grant.Kind
        var length: Span
        var testDescription: String { "\(kind)" }
    }

    @Test(arguments: [EarnCase(kind: .peek, length: .seconds(60)), EarnCase(kind: .token, length: .minutes(10))])
    func a_bypass_restarts_the_earning_hour_after_it_ends(_ c: EarnCase) throws {
        var (a, _) = account(Self.fiveTokens, at: berlin(2026, 11, 21, 9))
        _ = a.advance(to: berlin(2026, 11, 21, 9), blockInForce: true)
        let t = berlin(2026, 11, 21, 9, 40)
        _ = c.kind == .peek ? try a.peek("reddit", at: t) : try a.token("reddit", at: t)
        #expect(a.wallet.nextAwardAt == t + c.length + .minutes(60))
        let before = a.advance(to: t + c.length + .minutes(60) - Span(milliseconds: 1), blockInForce: true)
        #expect(before.rows.filter { $0.reason == .earn }.isEmpty)
        let at = a.advance(to: t + c.length + .minutes(60), blockInForce: true)
        #expect(at.rows.filter { $0.reason == .earn }.count == 1)
    }

    @Test func a_paid_peek_elsewhere_shortens_a_running_spend() throws {
        var (a, _) = account(credit: 100, at: berlin(2026, 11, 21, 12))
        _ = try a.peek("reddit", at: berlin(2026, 11, 21, 12))
        let spend = try #require(try a.use("tiktok", at: berlin(2026, 11, 21, 12, 1)).grant)
        #expect(spend.end == berlin(2026, 11, 21, 12, 2, 40))
        let out = try a.peek("instagram", at: berlin(2026, 11, 21, 12, 1, 10))
        #expect(out.events.contains { if case .grantShortened = $0.kind { true } else { false } })
        #expect(a.wallet.runningSpend?.end == berlin(2026, 11, 21, 12, 1, 40))
    }

    @Test func a_stated_task_travels_on_the_grant() throws {
        var (a, _) = account(Self.fiveTokens, at: berlin(2026, 11, 21, 12))
        let peek = try a.peek("messenger", task: "reply to Sam", at: berlin(2026, 11, 21, 12))
        #expect(peek.grant?.task == "reply to Sam")
        let token = try a.token("mail", task: "find the invoice", at: berlin(2026, 11, 21, 12))
        #expect(token.grant?.task == "find the invoice")
        #expect(a.status(at: berlin(2026, 11, 21, 12)).grantsInUse.compactMap(\.task) == ["reply to Sam", "find the invoice"])
    }

    /// `stop`'s help says it closes what `use` opened (SPEC §4): a peek runs to its end.
    @Test func stop_leaves_a_free_peek_running_and_says_when_it_ends() throws {
        var (a, _) = account(at: berlin(2026, 11, 21, 12))
        _ = try a.peek("reddit", at: berlin(2026, 11, 21, 12))
        #expect(throws: Refusal(rule: .grantRunning, subject: "reddit", opensAt: berlin(2026, 11, 21, 12, 1),
                                message: "No spend is running on reddit, so nothing was stopped and nothing is charged. The peek on reddit closes by itself; `stop` ends what `use` opened.")) {
            try a.stop("reddit", at: berlin(2026, 11, 21, 12, 0, 20))
        }
        #expect(a.wallet.grantsInUse.map(\.kind) == [.peek])
        #expect(a.wallet.grantsInUse.first?.end == berlin(2026, 11, 21, 12, 1))
    }

    @Test func stop_ends_the_spend_and_leaves_a_peek_on_another_entry_running() throws {
        var (a, _) = account(at: berlin(2026, 11, 21, 12))
        _ = try a.peek("reddit", at: berlin(2026, 11, 21, 12))
        _ = try a.use("instagram", at: berlin(2026, 11, 21, 12))
        let out = try a.stop(nil, at: berlin(2026, 11, 21, 12, 0, 30))
        #expect(out.rows.map(\.deltaSeconds) == [-30])
        #expect(a.wallet.grantsInUse.map(\.entry) == ["reddit"])
    }

    /// SPEC §4: `use` during a paid peek charged −60 s and then `spend` for the same minute.
    @Test func use_during_a_running_peek_is_refused_with_its_end_and_charges_nothing() throws {
        var (a, _) = account(at: berlin(2026, 11, 21, 11, 50))
        _ = try a.peek("instagram", at: berlin(2026, 11, 21, 11, 50)) // the free one
        let paid = try a.peek("instagram", at: berlin(2026, 11, 21, 12))
        #expect(paid.rows.map(\.deltaSeconds) == [-60])
        let before = a.wallet.balanceSeconds
        do throws(CreditError) {
            _ = try a.use("instagram", at: berlin(2026, 11, 21, 12, 0, 10))
            Issue.record("use stacked on a running peek")
        } catch {
            #expect(error.refusal?.rule == .grantRunning)
            #expect(error.refusal?.opensAt == berlin(2026, 11, 21, 12, 1))
            #expect(error.refusal?.message.contains("already open by your peek") == true)
        }
        #expect(a.wallet.balanceSeconds == before)
        // Once the peek ends, `use` opens and charges from then on, per second.
        _ = try a.use("instagram", for: .seconds(30), at: berlin(2026, 11, 21, 12, 1))
        _ = a.advance(to: berlin(2026, 11, 21, 12, 2), blockInForce: true)
        #expect(a.wallet.balanceSeconds == before - 30)
    }

    @Test func use_during_a_token_is_refused_and_a_peek_during_a_spend_too() throws {
        var (a, _) = account(Self.fiveTokens, at: berlin(2026, 11, 21, 12))
        _ = try a.token("tiktok", at: berlin(2026, 11, 21, 12))
        #expect(throws: CreditError.self) { try a.use("tiktok", at: berlin(2026, 11, 21, 12, 5)) }
        _ = try a.use("reddit", at: berlin(2026, 11, 21, 12, 5))
        do throws(Refusal) {
            _ = try a.peek("reddit", at: berlin(2026, 11, 21, 12, 6))
            Issue.record("a peek stacked on a running spend")
        } catch {
            #expect(error.rule == .grantRunning)
            #expect(error.message.contains("`scrolloff stop` ends the spend first"))
        }
    }

    @Test func ladder_state_survives_a_save_and_reload() throws {
        var (a, _) = account(Self.fiveTokens, at: berlin(2026, 11, 21, 12))
        _ = try a.peek("reddit", at: berlin(2026, 11, 21, 12))
        _ = try a.token("reddit", at: berlin(2026, 11, 21, 12, 5))
        let data = try JSONEncoder().encode(a.state)
        let reloaded = CreditAccount(state: try JSONDecoder().decode(CreditAccountState.self, from: data), policy: a.policy)
        #expect(reloaded.state == a.state)
        #expect(reloaded.status(at: berlin(2026, 11, 21, 12, 6)) == a.status(at: berlin(2026, 11, 21, 12, 6)))
    }
}
