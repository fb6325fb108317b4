import Foundation
import ScrollOffCore
import Store

extension HelperEngine {
    /// `scrolloff use ENTRY [--for D] [--task T]` (SPEC §4): opens a blocked entry, paid per second.
    /// Refused during a curfew, without credit, and for an entry that is not blocked now (spending
    /// on an open entry would only cost credit).
    public func use(_ word: String, for limit: Span? = nil, task: String? = nil,
                    profile: String = HelperEngine.defaultProfile) throws(EngineError) -> OpenedGrant {
        // Bounded before the wallet adds it to now: an unchecked limit near Int64's end once
        // wrapped to "−1 s" or trapped the addition (`CreditLimits`, as on the wire).
        if let limit, !(limit > .zero && limit <= .seconds(CreditLimits.spendLimitSeconds.upperBound)) {
            throw .invalid("--for must be between 1 s and \(SpanWords.describe(seconds: CreditLimits.spendLimitSeconds.upperBound)); "
                + "leave it out to spend until you stop or the credit runs out.")
        }
        let entry = try resolveOne(word)
        return try openGrant(entry, action: "use", profile: profile) { (p: inout ProfileRuntime, now: Instant) throws(EngineError) -> CreditOutcome in
            // The grant ends at now + limit: checked, since a trap here stops DNS for everyone.
            if let limit, now.millisecondsSince1970.addingReportingOverflow(limit.milliseconds).overflow {
                throw .invalid("--for \(SpanWords.describe(limit)) ends past the last time this helper can count to; use a shorter one.")
            }
            do throws(CreditError) {
                return try p.account.use(entry, for: limit, task: task, at: now, curfewEndsAt: p.curfewEnd(of: entry, at: now))
            } catch { throw EngineError(error) }
        }
    }

    /// `scrolloff peek ENTRY [--task T]` (SPEC §5 steps 1–2).
    public func peek(_ word: String, task: String? = nil, profile: String = HelperEngine.defaultProfile) throws(EngineError) -> OpenedGrant {
        let entry = try resolveOne(word)
        return try openGrant(entry, action: "peek", profile: profile) { (p: inout ProfileRuntime, now: Instant) throws(EngineError) -> CreditOutcome in
            do throws(Refusal) { return try p.account.peek(entry, task: task, at: now, curfewEndsAt: p.curfewEnd(of: entry, at: now)) } catch {
                throw .refused(error)
            }
        }
    }

    /// `scrolloff token ENTRY [--task T]` (SPEC §5 step 4).
    public func token(_ word: String, task: String? = nil, profile: String = HelperEngine.defaultProfile) throws(EngineError) -> OpenedGrant {
        let entry = try resolveOne(word)
        return try openGrant(entry, action: "token", profile: profile) { (p: inout ProfileRuntime, now: Instant) throws(EngineError) -> CreditOutcome in
            do throws(Refusal) { return try p.account.token(entry, task: task, at: now, curfewEndsAt: p.curfewEnd(of: entry, at: now)) } catch {
                throw .refused(error)
            }
        }
    }

    /// What the peek ladder would do now, so the CLI offers the exercise before a paid step only.
    public func nextBypassStep(profile: String = HelperEngine.defaultProfile) throws(EngineError) -> BypassStep {
        let now = advanceClock()
        let p = profiles[try profileIndex(profile, in: profiles)]
        return p.account.ladder.nextStep(at: now, policy: p.account.policy)
    }

    /// What `peek` or `token` would meet now (SPEC §5, §8), read-only: the next step of the ladder
    /// (the CLI offers the "try this first" exercise before any bypass, on a terminal), the
    /// plan that fits the moment (SPEC §8: time of day, weekday, and `entry` when given) and
    /// their alternatives, and what is left today. The plan is counted as shown here, once per
    /// bypass flow (`planShownAtPreview`); the grant that follows does not count it again.
    public func bypassPreview(profile: String = HelperEngine.defaultProfile, entry word: String? = nil) throws(EngineError) -> BypassOutlook {
        let now = advanceClock()
        var p = profiles[try profileIndex(profile, in: profiles)]
        _ = p.account.advance(to: now, blockInForce: p.blockInForce(at: now))
        let credit = p.account.status(at: now)
        let step = p.account.ladder.nextStep(at: now, policy: p.account.policy)
        // A word that names no entry is refused as the peek itself would refuse it: offering an
        // exercise and a plan for a typo, then refusing the bypass, offered what would be refused.
        let entry = try word.map { (w: String) throws(EngineError) -> EntryID in try resolveOne(w) }
        let plan = planShownAtPreview(profile: profile, entry: entry, at: now)
        return BypassOutlook(step: step, plan: plan, alternatives: alternativeList(profile: profile).map(\.text),
                             peeksLeftToday: credit.peeksLeftToday, tokensLeftMonth: credit.tokensLeftThisMonth,
                             plansOnFile: planBook.plans.filter { $0.profile == profile && !$0.archived }.count)
    }

    /// Shared shape of `use`, `peek` and `token`: checks the entry is blocked (a curfew is left to
    /// the core, whose refusal says when it ends), runs the operation, and shows the plan that
    /// fits the moment (SPEC §8, `planAtGrant`), counting it in the same commit unless the
    /// preview of the same flow already did. A refusal by a rule that holds is recorded as a
    /// `bypassRefused` event (SPEC §12).
    private func openGrant(_ entry: EntryID, action: String, profile: String,
                           _ operation: (inout ProfileRuntime, Instant) throws(EngineError) -> CreditOutcome) throws(EngineError) -> OpenedGrant {
        let (plan, countPlan) = planAtGrant(profile: profile, entry: entry, at: advanceClock())
        let result: OpenedGrant
        do {
            result = try grant(entry, profile: profile, plan: plan, countPlan: countPlan, operation)
        } catch {
            recordRefused(error, profile: profile, action: action, kind: .bypassRefused)
            throw error
        }
        if let plan, countPlan { planBook.countShown(plan.id) }
        planBook.granted(plan, profile: profile, entry: entry, at: clock.now)
        return result
    }

    private func grant(_ entry: EntryID, profile: String, plan: Plan?, countPlan: Bool,
                       _ operation: (inout ProfileRuntime, Instant) throws(EngineError) -> CreditOutcome) throws(EngineError) -> OpenedGrant {
        try perform { (w: inout Work) throws(EngineError) -> OpenedGrant in
            let i = try profileIndex(profile, in: w.profiles)
            var p = w.profiles[i]
            // SPEC §5a: nothing opens while an owner's pause holds; only an owner's resume ends it early.
            if let pause = p.rules.pause(at: w.now) {
                throw .refused(Refusal(rule: .paused, subject: p.name, opensAt: pause.end, reason: pause.reason,
                                       message: "Profile \(p.name) is paused, so nothing opens until the pause ends or an owner resumes it."))
            }
            switch p.rules.state(of: entry, at: w.now) {
            case .blocked, .curfew, .open: break
            case .none, .scheduled:
                throw .refused(Refusal(rule: .notBlocked, subject: entry.rawValue,
                                       message: "\(entry) is not blocked right now, so there is nothing to open and no credit was used."))
            }
            let out = try operation(&p, w.now)
            w.change.record(out, account: p.account.state, profile: p.name)
            guard let grant = out.grant else {
                throw .invalid("The operation on \(entry) opened nothing; this is a bug in Scroll Off, please report it.")
            }
            if let plan, countPlan { w.change.append(.countPlanShown(id: plan.id)) }
            w.profiles[i] = p
            let status = p.account.status(at: w.now)
            let alternatives = planBook.alternatives(profile: profile).map(\.text)
            let opened = out.events.first { if case .grantOpened = $0.kind { true } else { false } }
            return OpenedGrant(
                grant: grant, plan: plan.map { var shown = $0; if countPlan { shown.shownCount += 1 }; return shown },
                alternatives: alternatives,
                balanceSeconds: status.balanceSeconds, peeksLeftToday: status.peeksLeftToday, tokensLeftMonth: status.tokensLeftThisMonth,
                message: opened?.message ?? "\(entry) is open.")
        }
    }

    /// `scrolloff stop [ENTRY]`: ends the running spend (or the named entry's); nothing more is
    /// deducted. A peek or token is not what `use` opened: it runs to its end, and the refusal
    /// (or the message, when a spend was stopped too) says so.
    public func stop(_ word: String? = nil, profile: String = HelperEngine.defaultProfile) throws(EngineError) -> StoppedSpends {
        let entry = try word.map { (w: String) throws(EngineError) -> EntryID in try resolveOne(w) }
        // Ending a spend only stops charging, so a disk that refuses the write does not refuse
        // it (SPEC §3): it holds in memory, and the books record it when writes succeed again.
        var (result, held) = try perform(holdIfWriteFails: true) { (w: inout Work) throws(EngineError) -> StoppedSpends in
            let i = try profileIndex(profile, in: w.profiles)
            var p = w.profiles[i]
            let out: CreditOutcome
            do throws(Refusal) { out = try p.account.stop(entry, at: w.now) } catch { throw .refused(error) }
            w.change.record(out, account: p.account.state, profile: p.name)
            w.profiles[i] = p
            let stopped = out.events.compactMap { e -> Grant? in
                if case .grantEnded(let g, .stopped) = e.kind { return g }
                return nil
            }
            let balance = p.account.wallet.balanceSeconds
            // Say exactly what ended and what did not: `stop` closes spends, never a peek or token.
            var parts = stopped.map { g in
                "Stopped spending on \(g.entry) after \(SpanWords.describe(seconds: (g.end - g.start).milliseconds / 1000)); nothing more is charged."
            }
            for g in p.account.wallet.grantsInUse where g.kind != .spend && (entry == nil || g.entry == entry) {
                parts.append("Your \(g.kind.rawValue) on \(g.entry) runs on and closes by itself.")
            }
            let message = parts.joined(separator: " ")
            return StoppedSpends(stopped: stopped, balanceSeconds: balance,
                              message: message + " \(SpanWords.describe(seconds: balance)) of credit left.")
        }
        if held {
            result.message += " The state disk refuses writes right now; this stop holds, and the books record it once writes succeed (see `scrolloff doctor`)."
        }
        return result
    }

    /// Records how an offered exercise went (SPEC §5 step 3).
    public func recordExercise(_ exerciseID: String, entry word: String, outcome: ExerciseRecord.Outcome,
                               profile: String = HelperEngine.defaultProfile) throws(EngineError) {
        guard Exercise.named(exerciseID) != nil else {
            throw .notFound("There is no exercise “\(exerciseID)”; there are \(Exercise.catalogue.map(\.id).joined(separator: ", ")).")
        }
        let entry = try resolveOne(word)
        try perform { (w: inout Work) throws(EngineError) in
            let i = try profileIndex(profile, in: w.profiles)
            let record = ExerciseRecord(exerciseID: exerciseID, entry: entry, time: w.now, outcome: outcome)
            w.change.append(.appendEvent(StoredEvent(record.event, profile: w.profiles[i].name)))
            w.change.append(.recordExercise(profile: w.profiles[i].name, record))
        }
    }

    // MARK: Plans and alternatives (SPEC §8)

    /// `scrolloff plan add --when TEXT --then TEXT`: the plan as stored (the control server answers
    /// it as `PlanReport`, without its profile).
    public func addPlan(when: String, then: String, profile: String = HelperEngine.defaultProfile) throws(EngineError) -> Plan {
        let when = when.trimmingCharacters(in: .whitespacesAndNewlines), then = then.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !when.isEmpty, !then.isEmpty else {
            throw .invalid("A plan needs both parts: --when “I feel bored” --then “I will take a short walk”.")
        }
        let now = advanceClock()
        _ = try profileIndex(profile, in: profiles)
        let id = try commitReturning(StateChange([.addPlan(profile: profile, when: when, then: then, created: now)]), now: now).planIDs.first
        guard let id else { throw .storage("the new plan got no id") }
        let plan = Plan(id: id, profile: profile, when: when, then: then, created: now)
        planBook.add(plan)
        return plan
    }

    /// `scrolloff plan list`: active plans, most recent first; archived ones with `includeArchived`.
    public func planList(includeArchived: Bool = false, profile: String = HelperEngine.defaultProfile) -> [Plan] {
        planBook.plans(profile: profile, includeArchived: includeArchived)
    }

    /// `scrolloff plan archive ID`: hidden, never deleted (SPEC §12).
    public func archivePlan(_ id: Int64, profile: String = HelperEngine.defaultProfile) throws(EngineError) {
        try planBook.archivable(id, profile: profile)
        let now = advanceClock()
        _ = try commitReturning(StateChange([.archivePlan(id: id)]), now: now)
        planBook.archive(id)
    }

    /// `scrolloff alternatives add TEXT`: the alternative as stored (the control server answers
    /// it as `AlternativeReport`).
    public func addAlternative(_ text: String, profile: String = HelperEngine.defaultProfile) throws(EngineError) -> Alternative {
        let text = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { throw .invalid("Write the alternative in a few words, such as “text a friend”.") }
        let now = advanceClock()
        _ = try profileIndex(profile, in: profiles)
        let id = try commitReturning(StateChange([.addAlternative(profile: profile, text: text, created: now)]), now: now).alternativeIDs.first
        guard let id else { throw .storage("the new alternative got no id") }
        let alternative = Alternative(id: id, profile: profile, text: text, created: now)
        planBook.add(alternative)
        return alternative
    }

    /// `scrolloff alternatives list`, newest first.
    public func alternativeList(profile: String = HelperEngine.defaultProfile) -> [Alternative] {
        planBook.alternatives(profile: profile)
    }

    /// The plan to show at a bypass of `entry` now (`PlanBook.forMoment`), in the profile's zone,
    /// knowing the names of the catalog, the profile's entries and the lists.
    func planForMoment(profile: String, entry: EntryID?, at now: Instant) -> Plan? {
        guard let p = profiles.first(where: { $0.name == profile }) else { return nil }
        return planBook.forMoment(profile: profile, entryNames: entry.map { names(of: $0) }, at: now, timeZone: p.calendar.timeZone) {
            catalog.services.flatMap { [$0.id, $0.name] } + p.namedEntries(at: now).map(\.rawValue) + listNames.sorted()
        }
    }

    /// An entry's names people write: its id, and a service's display name.
    private func names(of entry: EntryID) -> [String] {
        var out = [entry.rawValue]
        if let s = catalog.service(id: entry.rawValue) { out.append(s.name) }
        return out
    }

    /// The plan the bypass preview shows (SPEC §8): chosen for the moment and counted as shown
    /// once per bypass flow — asking again for the same entry before the grant (a page refresh,
    /// a second look) does not count it again.
    func planShownAtPreview(profile: String, entry: EntryID?, at now: Instant) -> Plan? {
        if let plan = planBook.planInFlow(profile: profile, entry: entry, at: now) { return plan }
        guard let plan = planForMoment(profile: profile, entry: entry, at: now) else { return nil }
        do {
            _ = try commitReturning(StateChange([.countPlanShown(id: plan.id)]), now: now)
            planBook.previewed(plan, profile: profile, entry: entry, at: now)
        } catch {
            logger.warning("a plan shown could not be counted", metadata: ["error": "\(error)"])
        }
        return planBook.plan(id: plan.id) ?? plan
    }

    /// The plan a grant for `entry` shows, and whether the grant must count it: not when the
    /// preview of the same flow already did.
    func planAtGrant(profile: String, entry: EntryID, at now: Instant) -> (plan: Plan?, count: Bool) {
        if let plan = planBook.planInFlow(profile: profile, entry: entry, at: now) { return (plan, false) }
        return (planForMoment(profile: profile, entry: entry, at: now), true)
    }

    /// Commits a change that touches no profile state and returns the ids the store assigned.
    /// It goes through the same tail as every command, so tamper events and wallets are handled alike.
    func commitReturning(_ change: StateChange, now: Instant) throws(EngineError) -> CommitReceipt {
        var change = change
        var work = profiles
        return try commit(&change, profiles: &work, now: now)
    }
}
