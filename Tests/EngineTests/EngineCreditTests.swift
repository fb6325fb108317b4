import ControlAPI
import ControlServer
import Engine
import Helper
import ScrollOffCore
import Store
import Testing

@Suite("Engine: spending, peeks, tokens and curfews")
struct EngineCreditTests {
    @Test func first_setup_gives_two_minutes_of_starter_credit() async throws {
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), TestTimeSource(wall: Fixture.noon))
        let wallet = try await WalletReport(engine.wallet())
        #expect(wallet.balanceSeconds == 120)
        #expect(wallet.batches.map(\.origin) == ["starter"])
    }

    @Test func use_for_2m_opens_with_ttl_cap_at_most_120_and_stop_blocks_again() async throws {
        let time = TestTimeSource(wall: Fixture.noon)
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), time)
        _ = try await engine.block(["instagram"])
        let result = try await engine.use("instagram", for: .minutes(2), task: "reply to Sam")
        #expect(result.grant.end == Fixture.noon + .minutes(2))
        #expect(result.grant.task == "reply to Sam")

        let open = await engine.decision("www.instagram.com")
        #expect(open.blocked == false)
        #expect(open.managed)
        #expect(open.ttlCap <= 120 && open.ttlCap >= 1)

        time.pass(.seconds(45))
        #expect(await engine.decision("www.instagram.com").ttlCap <= 75)
        let status = try await StatusReport(engine.status())
        #expect(status.entries.first?.state == "open")
        #expect(status.grants.first?.task == "reply to Sam")

        let stopped = try await engine.stop()
        #expect(stopped.stopped.count == 1)
        #expect(stopped.balanceSeconds == 75)
        let after = await engine.decision("www.instagram.com")
        #expect(after.blocked)
        #expect(after.ttlCap <= 10)
    }

    @Test func balance_falls_by_one_second_per_second_while_spending() async throws {
        let time = TestTimeSource(wall: Fixture.noon)
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), time)
        _ = try await engine.block(["instagram"])
        _ = try await engine.use("instagram")
        var seen: [Int64] = []
        for _ in 0..<4 {
            time.pass(.seconds(1))
            seen.append(try await WalletReport(engine.wallet()).balanceSeconds)
        }
        #expect(seen == [119, 118, 117, 116])
        time.pass(.seconds(10))
        let wallet = try await WalletReport(engine.wallet())
        #expect(wallet.balanceSeconds == 106)
        #expect(wallet.spentTodaySeconds == 14)
    }

    @Test func spending_on_an_entry_that_is_not_blocked_is_refused() async throws {
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), TestTimeSource(wall: Fixture.noon))
        let r = await refusal { () async throws(EngineError) in try await engine.use("instagram") }
        #expect(r?.rule == .notBlocked)
        #expect(try await WalletReport(engine.wallet()).balanceSeconds == 120)
    }

    @Test func peek_ladder_free_then_paid_then_used_up() async throws {
        let time = TestTimeSource(wall: Fixture.noon)
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), time)
        _ = try await engine.block(["instagram"])
        _ = try await engine.addPlan(when: "I feel bored", then: "I will take a short walk")

        let first = try await engine.peek("instagram", task: "check a message")
        #expect(first.grant.end == Fixture.noon + .seconds(60))
        #expect(first.balanceSeconds == 120)
        #expect(first.peeksLeftToday == 2)
        #expect(first.plan?.when == "I feel bored")
        #expect(await engine.decision("www.instagram.com").blocked == false)

        // Locked for twice the peek after it ends (SPEC §5).
        time.pass(.seconds(61))
        try await engine.tick()
        #expect(await engine.decision("www.instagram.com").blocked)
        let locked = await refusal { () async throws(EngineError) in try await engine.peek("instagram") }
        #expect(locked?.rule == .bypassLockout)
        #expect(locked?.opensAt == Fixture.noon + .seconds(180))

        time.pass(.seconds(120))
        let second = try await engine.peek("instagram")
        #expect(second.balanceSeconds == 60)
        time.pass(.seconds(181))
        let third = try await engine.peek("instagram")
        #expect(third.balanceSeconds == 0)
        #expect(third.peeksLeftToday == 0)
        time.pass(.seconds(181))
        let none = await refusal { () async throws(EngineError) in try await engine.peek("instagram") }
        #expect(none?.rule == .peeksUsedUp)
        #expect(none?.opensAt == Fixture.noon + .hours(12)) // local midnight, UTC

        #expect(engine_planShownCount(await engine.planList()) == 3)
        #expect(try await engine.ledgerProblems().isEmpty)
    }

    private func engine_planShownCount(_ plans: [Plan]) -> Int { plans.first?.shownCount ?? -1 }

    @Test func token_opens_ten_minutes_and_counts_down_the_month() async throws {
        let time = TestTimeSource(wall: Fixture.noon)
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), time, preset: .flexible)
        _ = try await engine.block(["tiktok"])
        let token = try await engine.token("tiktok", task: "send the video to Mum")
        #expect(token.grant.end == Fixture.noon + .minutes(10))
        #expect(token.tokensLeftMonth == 2)
        #expect(await engine.decision("www.tiktok.com").blocked == false)
        #expect(try await StatusReport(engine.status()).tokensLeftMonth == 2)
    }

    @Test func strict_preset_has_no_tokens() async throws {
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), TestTimeSource(wall: Fixture.noon))
        _ = try await engine.block(["tiktok"])
        let r = await refusal { () async throws(EngineError) in try await engine.token("tiktok") }
        #expect(r?.rule == .tokensUsedUp)
    }

    @Test func nothing_opens_an_entry_during_a_curfew() async throws {
        let time = TestTimeSource(wall: Fixture.noon)
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), time, preset: .flexible)
        _ = try await engine.addSchedule(ScheduleRequest(name: "night", from: "11:00", to: "14:00", curfew: true, entries: ["instagram"],
                                                         reason: "sleep"))
        let d = await engine.decision("www.instagram.com")
        #expect(d.blocked)
        #expect(try await StatusReport(engine.status()).entries.first?.state == "curfew")
        let curfewEnd = Fixture.noon + .hours(2)
        let use = await refusal { () async throws(EngineError) in try await engine.use("instagram") }
        let peek = await refusal { () async throws(EngineError) in try await engine.peek("instagram") }
        let token = await refusal { () async throws(EngineError) in try await engine.token("instagram") }
        for r in [use, peek, token] {
            #expect(r?.rule == .curfew)
            #expect(r?.opensAt == curfewEnd)
        }
        #expect(try await WalletReport(engine.wallet()).balanceSeconds == 120)
    }

    /// SPEC §2, §4: nothing opens an entry during a curfew and spending is refused then, so a spend
    /// running into a curfew ends at its start, charged nothing for the minutes the curfew keeps shut.
    @Test func a_spend_running_into_a_curfew_ends_at_its_start_and_is_charged_up_to_it_only() async throws {
        let time = TestTimeSource(wall: Fixture.noon)
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), time)
        _ = try await engine.block(["instagram"])
        _ = try await engine.addSchedule(ScheduleRequest(name: "lunch", from: "12:01", to: "13:00", curfew: true, entries: ["instagram"]))
        _ = try await engine.use("instagram")
        time.pass(.seconds(90))
        try await engine.tick()
        #expect(await engine.decision("www.instagram.com").blocked)
        let wallet = try await WalletReport(engine.wallet())
        #expect(wallet.balanceSeconds == 60, "charged \(120 - wallet.balanceSeconds) s for a 60 s spend before the curfew")
        #expect(wallet.grants.isEmpty)
        time.pass(.minutes(50))
        try await engine.tick()
        #expect(try await WalletReport(engine.wallet()).balanceSeconds == 60, "nothing charged during the curfew")
        time.pass(.minutes(10))
        try await engine.tick()
        #expect(await engine.decision("www.instagram.com").blocked, "the spend does not come back after the curfew")
    }

    /// Spending on an entry that is not blocked is refused (it would only cost credit), so a spend
    /// whose block window ends stops there too: the entry is open for free from then on.
    @Test func a_spend_ends_when_its_block_window_ends_and_is_charged_up_to_it_only() async throws {
        let time = TestTimeSource(wall: Fixture.noon)
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), time)
        _ = try await engine.addSchedule(ScheduleRequest(name: "noon", from: "12:00", to: "12:01", entries: ["youtube"]))
        _ = try await engine.use("youtube")
        time.pass(.seconds(90))
        try await engine.tick()
        #expect(await engine.decision("www.youtube.com").blocked == false)
        let wallet = try await WalletReport(engine.wallet())
        #expect(wallet.balanceSeconds == 60, "charged \(120 - wallet.balanceSeconds) s for 60 s of a blocked youtube")
        #expect(wallet.grants.isEmpty)
        let events = try await engine.events().map(EventReport.init)
        #expect(events.contains { $0.message?.contains("no longer blocked") == true }, "\(events.map(\.message))")
    }

    /// A rule a command changes applies from now on: `unblock` during a spend ends it now, charged
    /// for every second used, not back at the spend's last settlement.
    @Test func unblock_during_a_spend_ends_it_now_charged_for_the_time_used() async throws {
        let time = TestTimeSource(wall: Fixture.noon)
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), time)
        _ = try await engine.block(["instagram"])
        time.pass(.hours(2) + .minutes(1))
        let before = try await WalletReport(engine.wallet()).balanceSeconds
        _ = try await engine.use("instagram")
        time.pass(.seconds(60))
        _ = try await engine.unblock(["instagram"])
        let wallet = try await WalletReport(engine.wallet())
        #expect(wallet.balanceSeconds == before - 60, "charged \(before - wallet.balanceSeconds) s for a 60 s spend")
        #expect(wallet.grants.isEmpty)
    }

    @Test func curfew_edit_lock_refuses_removal_and_edits_until_it_ends() async throws {
        let time = TestTimeSource(wall: Fixture.noon)
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), time)
        // Starts in 20 minutes: inside the 30-minute lead of the edit lock (SPEC §2).
        _ = try await engine.addSchedule(ScheduleRequest(name: "lunch", from: "12:20", to: "13:00", curfew: true, entries: ["reddit"]))
        let rm = await refusal { () async throws(EngineError) in try await engine.removeSchedule("lunch") }
        #expect(rm?.rule == .curfewEditLock)
        #expect(rm?.opensAt == Fixture.noon + .minutes(60))
        let edit = await refusal { () async throws(EngineError) in
            try await engine.addSchedule(ScheduleRequest(name: "lunch", from: "12:30", to: "13:00", curfew: true, entries: ["reddit"]))
        }
        #expect(edit?.rule == .curfewEditLock)
        // A stronger edit is refused too while locked; after the curfew the cooldown (2 h from adding) still holds.
        time.pass(.minutes(61))
        let later = await refusal { () async throws(EngineError) in try await engine.removeSchedule("lunch") }
        #expect(later?.rule == .cooldown)
        #expect(later?.opensAt == Fixture.noon + .hours(2))
        time.pass(.minutes(60))
        try await engine.removeSchedule("lunch")
        #expect(try await engine.schedules().isEmpty)
    }

    @Test(arguments: [("12:00", "12:00"), ("20:00", "14:00")])
    func invalid_schedules_are_refused(from: String, to: String) async throws {
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), TestTimeSource(wall: Fixture.noon))
        let r = await refusal { () async throws(EngineError) in
            try await engine.addSchedule(ScheduleRequest(name: "x", from: from, to: to, curfew: true, entries: ["reddit"]))
        }
        #expect(r?.rule == .invalidSchedule)
    }

    @Test func a_bypass_shows_alternatives_and_the_exercise_outcome_is_recorded() async throws {
        let time = TestTimeSource(wall: Fixture.noon)
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), time)
        _ = try await engine.block(["youtube"])
        _ = try await engine.addAlternative("make tea")
        _ = try await engine.addAlternative("text a friend")
        #expect(try await engine.nextBypassStep() == .freePeek)
        try await engine.recordExercise("grounding", entry: "youtube", outcome: .completed)
        let peek = try await engine.peek("youtube")
        #expect(peek.alternatives == ["text a friend", "make tea"])
        #expect(peek.plan == nil)
        #expect(try await engine.nextBypassStep() == .paidPeek(costSeconds: 60))
        let exercises = try await engine.events().map(EventReport.init).filter { $0.kind == "exercise" }
        #expect(exercises.count == 1)
        #expect(exercises.first?.entry == "youtube")
    }

    @Test func archived_plans_are_not_shown_and_the_newest_active_plan_is() async throws {
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), TestTimeSource(wall: Fixture.noon))
        _ = try await engine.block(["reddit"])
        let old = try await engine.addPlan(when: "I am waiting around", then: "I will look out of the window")
        let newer = try await engine.addPlan(when: "I feel bored", then: "I will tidy one shelf")
        try await engine.archivePlan(newer.id)
        let peek = try await engine.peek("reddit")
        #expect(peek.plan?.id == old.id)
        #expect(await engine.planList().map(\.id) == [old.id])
        #expect(await engine.planList(includeArchived: true).count == 2)
    }

    @Test func focus_session_blocks_now_and_ends_by_itself() async throws {
        let time = TestTimeSource(wall: Fixture.noon)
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), time)
        let focus = try await engine.focus(length: .minutes(45), entries: ["tiktok", "news.example.com"], reason: "essay")
        #expect(focus.end == Fixture.noon + .minutes(45))
        #expect(await engine.decision("www.tiktok.com").blocked)
        #expect(await engine.decision("news.example.com").blocked)
        #expect(try await StatusReport(engine.status()).entries.allSatisfy { $0.lockedUntil == focus.end && $0.reason == "essay" })
        #expect(await engine.nextDueInstant() == focus.end)
        time.pass(.minutes(45))
        try await engine.tick()
        #expect(await engine.decision("www.tiktok.com").blocked == false)
    }
}

/// SPEC §8: the plan the bypass preview offers is the plan the grant shows and counts.
@Suite("Engine: the plan shown before a bypass")
struct ActivePlanTests {
    @Test func preview_and_grant_show_the_plan_made_last_even_when_ids_run_the_other_way() async throws {
        let dir = Fixture.temporaryDirectory()
        let time = TestTimeSource(wall: Fixture.noon)
        let first = try await Fixture.start(dir, time)
        _ = try await first.block(["instagram"])
        let newest = try await first.addPlan(when: "I feel bored", then: "I will walk")
        // A row with a higher id made earlier (a restored backup, a hand edit): ids and times disagree.
        let store = try Store(directory: dir)
        let anchor = try store.load().anchor
        try store.commit(StateChange([.addPlan(profile: "default", when: "old", then: "older", created: Fixture.noon - .hours(5))]),
                         anchor: try #require(anchor))

        let engine = try await Fixture.start(dir, time)
        let preview = try await engine.bypassPreview()
        let grant = try await engine.peek("instagram")
        #expect(preview.plan?.id == newest.id)
        #expect(grant.plan?.id == newest.id)
    }

    /// A word that names no entry gets the peek's own refusal from the preview, so nobody is
    /// offered an exercise and a plan for a bypass that would then be refused.
    @Test func the_preview_refuses_a_word_that_names_no_entry_as_the_peek_does() async throws {
        let dir = Fixture.temporaryDirectory()
        let engine = try await Fixture.start(dir, TestTimeSource(wall: Fixture.noon))
        _ = try await engine.block(["instagram"])
        _ = try await engine.addPlan(when: "I feel bored", then: "I will walk")
        var previewError: EngineError?
        do { _ = try await engine.bypassPreview(entry: "instagramm") } catch { previewError = error }
        var peekError: EngineError?
        do { _ = try await engine.peek("instagramm") } catch { peekError = error }
        let refused = try #require(previewError, "the preview answered for an unknown word")
        #expect(refused == peekError)
        #expect("\(refused)".contains("Did you mean instagram?"), "\(refused)")
        #expect(try await engine.bypassPreview(entry: "instagram").plan != nil)
    }
}
