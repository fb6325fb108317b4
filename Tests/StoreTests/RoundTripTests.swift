import Foundation
import GRDB
import ScrollOffCore
import Testing
@testable import Store

@Suite struct RoundTripTests {
    @Test func busy_wallet_and_ladder_load_back_exactly_after_reopen() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let saved: CreditAccountState
        do {
            let store = try Fixture.store(in: dir)
            saved = try Fixture.busyAccount(in: store).state
        }
        // The fixture must really exercise the tricky parts, or equality proves little.
        #expect(saved.wallet.spend != nil)
        #expect(saved.wallet.unchargedMilliseconds > 0)
        #expect(saved.wallet.batches.contains { $0.earmark != nil })
        #expect(saved.wallet.batches.contains { $0.origin == .starter })
        #expect(saved.wallet.batches.contains { if case .earned = $0.origin { true } else { false } })
        #expect(!saved.wallet.grantsInUse.isEmpty)
        #expect(!saved.ladder.lockedUntil.isEmpty && saved.ladder.tokensUsed == 1 && saved.ladder.freePeeksUsed == 2)

        let reopened = try Store(directory: dir.stateDirectory)
        let loaded = try reopened.load()
        let profile = try #require(loaded.profile(named: Fixture.profile))
        #expect(profile.account == saved)
        #expect(profile.openGrants == saved.wallet.grantsInUse)
        #expect(profile.settings == Fixture.settings())
    }

    @Test func a_restarted_wallet_behaves_exactly_like_one_that_kept_running() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try Fixture.store(in: dir)
        var running = try Fixture.busyAccount(in: store)
        let loaded = try #require(try store.load().profile(named: Fixture.profile)?.account)
        var restarted = CreditAccount(state: loaded, policy: Fixture.policy())
        let later = running.state.wallet.asOf + .hours(30)
        let a = running.advance(to: later, blockInForce: true)
        let b = restarted.advance(to: later, blockInForce: true)
        #expect(a == b)
        #expect(running.state == restarted.state)
        #expect(!a.rows.isEmpty) // the spend settles, credit expires and more is earned on the way
    }

    @Test func rules_plans_lists_and_anchor_round_trip() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try Fixture.store(in: dir)
        let t = Fixture.start
        let block = Block(entry: "instagram", created: t, cooldownUntil: t + .hours(2), reason: "sleep before exams")
        let schedules = [
            Schedule(name: "evenings", start: try LocalTime.parse("21:00"), end: try LocalTime.parse("07:30"), days: .weekdays,
                     timeZoneID: "Europe/Berlin", entries: ["instagram", "tiktok"], kind: .block, reason: nil, enabled: true,
                     cooldownUntil: t + .hours(1)),
            Schedule(name: "night", start: try LocalTime.parse("23:00"), end: try LocalTime.parse("06:00"), days: [.friday, .saturday],
                     timeZoneID: "America/New_York", entries: ["youtube"], kind: .curfew, reason: "rest", enabled: false),
            Schedule(name: "strict", start: try LocalTime.parse("01:00"), end: try LocalTime.parse("05:00"), days: .daily,
                     timeZoneID: "UTC", entries: [], kind: .strictCurfew),
        ]
        let focus = try FocusSession(id: 7, entries: ["reddit", "x"], startingAt: t, length: .minutes(45), reason: "essay")
        var change = StateChange([
            .saveEntry(profile: Fixture.profile, StoredEntry(id: "instagram", kind: .service, added: t)),
            .saveEntry(profile: Fixture.profile, StoredEntry(id: "news.example.com", kind: .domain, added: t + .seconds(1))),
            .saveBlock(profile: Fixture.profile, block),
            .saveFocusSession(profile: Fixture.profile, focus),
            .addPlan(profile: Fixture.profile, when: "I'm bored, waiting", then: "read \"two\" pages", created: t),
            .addAlternative(profile: Fixture.profile, text: "walk around the block", created: t),
        ])
        for s in schedules { change.append(.saveSchedule(profile: Fixture.profile, s)) }
        // The boot clock is unsigned; the top bit must survive SQLite's signed integers.
        let anchor = ClockAnchor(trusted: t + .seconds(5), bootNanoseconds: UInt64.max - 3, bootID: "2f1c-…-boot")
        let receipt = try store.commit(change, anchor: anchor)
        let planID = try #require(receipt.planIDs.first)
        try store.commit(StateChange([.countPlanShown(id: planID), .countPlanShown(id: planID), .archivePlan(id: planID)]), anchor: anchor)

        let loaded = try Store(directory: dir.stateDirectory).load()
        let p = try #require(loaded.profile(named: Fixture.profile))
        #expect(loaded.anchor == anchor)
        #expect(p.blocks == [block])
        #expect(p.schedules == schedules.sorted { $0.name < $1.name })
        #expect(p.focusSessions == [focus])
        #expect(p.entries.map(\.id) == ["instagram", "news.example.com"])
        #expect(p.entries.map(\.kind) == [.service, .domain])
        #expect(loaded.plans == [Plan(id: planID, profile: Fixture.profile, when: "I'm bored, waiting", then: "read \"two\" pages",
                                      created: t, archived: true, shownCount: 2)])
        #expect(loaded.alternatives.map(\.text) == ["walk around the block"])
        #expect(p.account == nil)
        // The loaded rules answer like the saved ones.
        #expect(p.rules.status(of: "instagram", at: t + .minutes(1)).state == .blocked)
    }

    @Test func removals_and_profile_cascade() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try Fixture.store(in: dir)
        let t = Fixture.start
        _ = try Fixture.busyAccount(in: store)
        try store.commit(StateChange([
            .saveProfile(Fixture.settings("kids", preset: .strict)),
            .saveBlock(profile: "kids", Block(entry: "tiktok", created: t, cooldownUntil: t + .hours(2))),
            .saveBlock(profile: Fixture.profile, Block(entry: "x", created: t, cooldownUntil: t)),
        ]), anchor: Fixture.anchor(t))
        try store.commit(StateChange([.removeBlock(profile: Fixture.profile, "x"), .removeProfile("kids")]), anchor: Fixture.anchor(t))
        let loaded = try store.load()
        #expect(loaded.profiles.map(\.settings.name) == [Fixture.profile])
        #expect(loaded.profiles.first?.blocks == [])
        #expect(try store.verifyLedger().allSatisfy { $0.isConsistent })
    }

    @Test func ended_grants_keep_their_real_end_and_reason() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try Fixture.store(in: dir)
        var a = CreditAccount(state: CreditAccountState(asOf: Fixture.start), policy: Fixture.policy())
        let t = Fixture.start
        try Fixture.apply(store, &a, at: t) { $0.grantStarter(at: t) }
        try Fixture.apply(store, &a, at: t) { try $0.use("instagram", at: t) }
        try Fixture.apply(store, &a, at: t + .seconds(30)) { try $0.stop("instagram", at: t + .seconds(30)) }
        let grants = try store.grants(profile: Fixture.profile)
        #expect(grants.count == 1)
        #expect(grants.first?.end == t + .seconds(30))
        #expect(try store.load().profiles.first?.openGrants == [])
        let reason = try store.read { db in try String.fetchOne(db, sql: "SELECT end_reason FROM grants") }
        #expect(reason == "stopped")
    }

    @Test func exercise_outcomes_and_events_are_recorded() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try Fixture.store(in: dir)
        let t = Fixture.start
        let record = ExerciseRecord(exerciseID: "grounding", entry: "instagram", time: t, outcome: .bypassAvoided)
        var change = StateChange()
        change.record(CreditOutcome(events: [record.event]), account: CreditAccountState(asOf: t), profile: Fixture.profile)
        change.append(.appendEvent(StoredEvent(profile: Fixture.profile, time: t, kind: .urge, entry: "instagram", clientIP: "192.168.1.20")))
        change.append(.appendEvent(StoredEvent(ClockJump(direction: .back, wall: t - .hours(2), trusted: t, offset: .hours(-2)))))
        try store.commit(change, anchor: Fixture.anchor(t))
        #expect(try store.exercises(profile: Fixture.profile) == [record])
        let events = try store.events(profile: Fixture.profile)
        #expect(events.map(\.kind) == [.exercise, .urge, .tamper])
        #expect(events[1].clientIP == "192.168.1.20")
        #expect(events[2].profile == nil)
        #expect(try store.events(kinds: [.urge]).count == 1)
    }
}

@Suite struct EventTests {
    @Test func curfew_reminders_and_refused_edits_are_stored_with_their_words() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try Fixture.store(in: dir)
        let t = Fixture.start
        let night = Schedule(name: "night", start: try LocalTime.parse("23:00"), end: try LocalTime.parse("06:00"), timeZoneID: "UTC",
                             entries: ["instagram", "tiktok", "reddit", "x"], kind: .curfew, reason: "sleep")
        let reminder = try #require(ProfileRules(schedules: [night]).nextCurfewReminder(after: t))
        let refusal = Refusal(rule: .cooldown, subject: "instagram", opensAt: t + .hours(1), reason: "exams", message: "instagram stays blocked for 1 h more")
        try store.commit(StateChange([.appendEvent(StoredEvent(reminder, profile: Fixture.profile)),
                                      .appendEvent(StoredEvent(refused: refusal, profile: Fixture.profile, at: t))]),
                         anchor: Fixture.anchor(t))
        let events = try store.events(profile: Fixture.profile)
        #expect(events.map(\.kind) == [.editRefused, .curfewReminder]) // by time: the reminder is due at 22:50
        #expect(events[1].time == reminder.remindAt)
        #expect(events[1].message == reminder.message)
        #expect(events[1].message?.contains("4 entries") == true)
        let payload = try #require(events[0].payload)
        #expect(try JSONDecoder().decode(Refusal.self, from: Data(payload.utf8)) == refusal)
    }
}
