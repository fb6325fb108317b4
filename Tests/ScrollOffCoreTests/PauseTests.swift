import Testing
import ScrollOffCore

/// An owner's pause (SPEC §5a) in the rules and the snapshot: every name of the profile answers
/// blocked from its start to its end, grants included, with no rebuild at either edge; other
/// profiles are untouched.
@Suite struct PauseTests {
    static let zone = "Europe/Berlin"
    static func at(_ text: String) -> Instant { RulesTime.local(text, zone) }
    static let now = at("2026-11-23 18:00")
    static let pause = Pause(start: now, end: at("2026-11-23 18:45"), reason: "dinner")

    /// Entry indices: 0 instagram (blocked, opened by a grant until 19:00), 1 youtube (no rule).
    static let catalog: [EntryID] = ["instagram", "youtube"]
    static let sets: [[EntryIndex]] = [[], [0], [1]]

    static var kid: ProfileRules {
        ProfileRules(blocks: [Block(entry: "instagram", created: at("2026-11-01 00:00"), cooldownUntil: at("2026-11-01 02:00"))],
                     grants: [Grant(id: 1, entry: "instagram", kind: .spend, start: at("2026-11-23 17:50"), end: at("2026-11-23 19:00"))],
                     pause: pause)
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var label: String, profile: Int, set: EntrySetID, time: String, blocked: Bool
        var testDescription: String { label }
    }

    static let cases: [Case] = [
        Case(label: "paused: a name no rule names is blocked", profile: 1, set: 2, time: "2026-11-23 18:00", blocked: true),
        Case(label: "paused: a name with no entry at all is blocked", profile: 1, set: 0, time: "2026-11-23 18:30", blocked: true),
        Case(label: "paused: a grant does not open its entry", profile: 1, set: 1, time: "2026-11-23 18:10", blocked: true),
        Case(label: "last millisecond of the pause: still blocked", profile: 1, set: 2, time: "2026-11-23 18:44", blocked: true),
        Case(label: "after the pause: the unnamed name answers again", profile: 1, set: 2, time: "2026-11-23 18:45", blocked: false),
        Case(label: "after the pause: the grant opens its entry again", profile: 1, set: 1, time: "2026-11-23 18:50", blocked: false),
        Case(label: "another profile is not paused", profile: 0, set: 2, time: "2026-11-23 18:10", blocked: false),
    ]

    @Test(arguments: cases)
    func pause_decision_table(c: Case) {
        let snapshot = EnforcementSnapshot(entrySets: Self.sets, entries: Self.catalog, profiles: [ProfileRules(), Self.kid], builtAt: Self.now)
        let d = snapshot.decide(profile: c.profile, set: c.set, now: Self.at(c.time))
        #expect(d.blocked == c.blocked)
    }

    @Test func a_paused_profile_answers_with_ttls_that_end_at_the_pause_end() {
        let snapshot = EnforcementSnapshot(entrySets: Self.sets, entries: Self.catalog, profiles: [ProfileRules(), Self.kid], builtAt: Self.now)
        #expect(snapshot.validUntil == Self.pause.end)
        // A blocked answer is capped at 10 s; an open one after it lives only until nothing changes.
        #expect(snapshot.decide(profile: 1, set: 2, now: Self.at("2026-11-23 18:44")).ttlCap <= 10)
    }

    @Test func a_paused_entry_reads_curfew_with_the_pause_reason_and_changes_at_its_end() {
        let s = Self.kid.status(of: "instagram", at: Self.now + .minutes(5))
        #expect(s.state.kind == .curfew)
        #expect(s.reason == "dinner")
        #expect(s.nextChange == Self.pause.end)
        #expect(Self.kid.spendStops(on: "instagram", from: Self.at("2026-11-23 17:55"), to: Self.now + .minutes(1))?.at == Self.now)
    }

    @Test func a_pause_that_is_over_changes_nothing() {
        var rules = Self.kid
        rules.pause = Pause(start: Self.at("2026-11-23 12:00"), end: Self.at("2026-11-23 13:00"))
        #expect(rules.pause(at: Self.now) == nil)
        #expect(rules.state(of: "instagram", at: Self.now).kind == .open)
        let snapshot = EnforcementSnapshot(entrySets: Self.sets, entries: Self.catalog, profiles: [rules], builtAt: Self.now)
        #expect(!snapshot.decide(profile: 0, set: 2, now: Self.now).blocked)
    }
}
