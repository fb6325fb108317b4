import Enforcement
import Foundation
import ScrollOffCore
import Store

/// The household's verbs: owners grant or take time, members ask for time and owners
/// answer. Who may call which is the control side's decision (`ControlAuthorizer` for the CLI,
/// the web page for devices); the engine checks the request itself and keeps the books.
extension HelperEngine {
    /// The longest single adjustment or request: a day. A typo such as `+100h` is refused rather
    /// than written into the ledger. `CreditLimits` is the one place the ranges are written (the
    /// control API's `AdjustmentBounds` and `TimeRequestBounds` are declared from it).
    public static let longestHouseholdGrant: Int64 = CreditLimits.adjustmentSeconds.upperBound
    /// Unanswered requests one profile may have at once (`TimeRequests.pendingPerProfile`).
    public static let pendingRequestsPerProfile = TimeRequests.pendingPerProfile
    /// How long a request waits for its answer (`TimeRequests.pendingLifetime`).
    public static let pendingRequestLifetime = TimeRequests.pendingLifetime
    /// Who "answered" an expired request, in `answered_by` and on the member's page.
    public static let requestExpiryAuthor = TimeRequests.expiryAuthor
    /// Notes are short sentences; longer text is refused rather than cut.
    public static let longestHouseholdNote = PersonWords.longest

    /// Declines, as the helper, every pending request older than `TimeRequests.pendingLifetime`:
    /// one answer row and one event each, in one commit. A failed write leaves them pending; the
    /// next tick tries again.
    func expireTimeRequestsIfDue(now: Instant) {
        let due = requests.expired(at: now)
        guard !due.isEmpty else { return }
        do {
            _ = try commitReturning(TimeRequests.expiryChange(due, at: now), now: now)
        } catch {
            logger.warning("expired requests for time could not be written; the next wake tries again", metadata: ["error": "\(error)"])
            return
        }
        for request in due {
            requests.answered(id: request.id, status: .declined, at: now, by: TimeRequests.expiryAuthor, note: TimeRequests.expiryNote)
        }
    }

    /// `scrolloff adjust [+|-]DURATION --note TEXT` (SPEC §13, owners): adds credit (an
    /// `adjustment` batch that never expires) or takes it back (at most the balance), as one
    /// ledger `adjust` row with `note`. `by` names who did it, for the event.
    public func adjust(profile: String, seconds: Int64, note: String, by: String) throws(EngineError) -> CreditAdjustment {
        let note = try Household.note(note, what: "adjustment", example: "“chores done”")
        try Household.checkAdjustment(seconds)
        return try perform { (w: inout Work) throws(EngineError) -> CreditAdjustment in
            try Household.adjust(&w, profile: profile, seconds: seconds, note: note, by: by)
        }
    }

    /// A member asks for `seconds` of credit with `note`. The request waits for an owner;
    /// at most `pendingRequestsPerProfile` wait at once.
    public func requestTime(profile: String, seconds: Int64, note: String) throws(EngineError) -> TimeRequest {
        let note = try Household.note(note, what: "request", example: "“homework research”")
        guard CreditLimits.requestSeconds.contains(seconds) else {
            throw .invalid("Ask for between 1 min and \(SpanWords.describe(seconds: Self.longestHouseholdGrant)), such as 15m; \(seconds) s is not.")
        }
        let now = advanceClock()
        _ = try profileIndex(profile, in: profiles)
        // A request past its lifetime no longer holds a slot, even before the timer got to it.
        expireTimeRequestsIfDue(now: now)
        let pending = requests.pending(profile: profile)
        if pending.count >= Self.pendingRequestsPerProfile {
            throw .refused(Refusal(rule: .requestsPending, subject: profile,
                                   message: "Profile \(profile) already has \(pending.count) requests waiting for an answer (at most \(Self.pendingRequestsPerProfile)); "
                                       + "an owner answers them with `scrolloff requests`."))
        }
        let words = SpanWords.describe(seconds: seconds)
        let event = StoredEvent(profile: profile, time: now, kind: .timeRequested,
                                message: "Asked for \(words): \(note)", payload: Household.payload(["seconds": "\(seconds)"]))
        let receipt = try commitReturning(StateChange([.addTimeRequest(profile: profile, seconds: seconds, note: note, created: now),
                                                       .appendEvent(event)]), now: now)
        guard let id = receipt.timeRequestIDs.first else { throw .storage("the new request got no id") }
        let request = TimeRequest(id: id, profile: profile, seconds: seconds, note: note, created: now)
        requests.add(request)
        return request
    }

    /// Requests for time, newest first: one profile's, or every profile's for `nil`.
    public func timeRequests(profile: String?) -> [TimeRequest] {
        requests.list(profile: profile)
    }

    /// What `status` shows a member: pending requests and those answered in the last 7 days.
    package func recentTimeRequests(profile: String, now: Instant) -> [TimeRequest] {
        requests.recent(profile: profile, now: now)
    }

    /// An owner answers request `id`: approval writes the ledger `adjust` row with the request's
    /// note (and the owner's, when given) in the same commit as the answer; a decline only records
    /// it. A request is answered once.
    public func answerTimeRequest(id: Int64, approve: Bool, answeredBy: String, note: String?) throws(EngineError) -> AnsweredTimeRequest {
        let answerNote = note.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.flatMap { $0.isEmpty ? nil : $0 }
        if let answerNote, answerNote.count > Self.longestHouseholdNote {
            throw .invalid("Keep the answer's note under \(Self.longestHouseholdNote) characters.")
        }
        let request = try requests.answerable(id: id)
        let status: TimeRequest.Status = approve ? .approved : .declined
        let (adjustment, now) = try perform { (w: inout Work) throws(EngineError) -> (CreditAdjustment?, Instant) in
            var adjustment: CreditAdjustment?
            if approve {
                let ledgerNote = "request \(id): \(request.note)" + (answerNote.map { " — \($0)" } ?? "")
                adjustment = try Household.adjust(&w, profile: request.profile, seconds: request.seconds, note: ledgerNote, by: answeredBy)
            }
            w.change.append(.answerTimeRequest(id: id, status: status, at: w.now, by: answeredBy, note: answerNote))
            let words = SpanWords.describe(seconds: request.seconds)
            w.change.append(.appendEvent(StoredEvent(
                profile: request.profile, time: w.now, kind: .timeRequestAnswered,
                message: "\(answeredBy) \(status.rawValue) the request for \(words)" + (answerNote.map { ": \($0)" } ?? "."),
                payload: Household.payload(["request": "\(id)", "status": status.rawValue]))))
            return (adjustment, w.now)
        }
        let answered = requests.answered(id: id, status: status, at: now, by: answeredBy, note: answerNote) ?? request
        let words = SpanWords.describe(seconds: request.seconds)
        let message = approve
            ? "Approved: \(words) added to the credit of \(request.profile)." + (adjustment.map { " Balance \(SpanWords.describe(seconds: $0.balanceSeconds))." } ?? "")
            : "Declined the request for \(words) from \(request.profile)."
        return AnsweredTimeRequest(request: answered, adjustment: adjustment, message: message)
    }
}

// MARK: Removing a profile

extension HelperEngine {
    /// `scrolloff profile rm NAME` (SPEC §13, root): deletes the profile and everything it owns —
    /// rules, wallet, ledger, events, plans, alternatives and requests — and its devices follow
    /// the profile unknown devices follow. Moving devices out of a profile loosens their rules, so
    /// it is refused while any of its locks holds (a cooldown, a curfew edit lock, a focus
    /// session), like every other loosening (SPEC §3). The default profile cannot be removed, and
    /// a profile the configuration file names comes back with the next reload, so it is refused
    /// with where to remove it instead.
    public func removeProfile(_ name: String) throws(EngineError) -> String {
        guard name != Self.defaultProfile else {
            throw .invalid("The default profile covers every device no other profile claims, so it cannot be removed.")
        }
        if configuredProfiles.names.contains(name) {
            throw .invalid("Profile “\(name)” comes from the configuration file; remove its [[profiles]] table there and reload (systemctl reload scrolloff-dns).")
        }
        // Urges waiting for their batch name profiles by position, which the removal shifts.
        try flushUrges()
        var balance: Int64 = 0
        try perform { (w: inout Work) throws(EngineError) in
            guard let i = w.profiles.firstIndex(where: { $0.name == name }) else {
                throw .notFound("There is no profile “\(name)”; profiles: \(w.profiles.map(\.name).joined(separator: ", ")).")
            }
            if name == configuredProfiles.unknownDevices {
                throw .invalid("Profile “\(name)” is where unknown devices go (unknown_devices in scrolloff.toml); point that elsewhere first.")
            }
            if let until = ProfileWeakening.locksEnd(of: w.profiles[i], at: w.now) {
                throw .refused(Refusal(rule: .cooldown, subject: name, opensAt: until,
                                       message: "Profile \(name) has a lock in force (a cooldown, a curfew edit lock or a focus session); removing it would free its devices, so it waits until the lock ends."))
            }
            balance = w.profiles[i].account.wallet.balanceSeconds
            w.profiles.remove(at: i)
            w.change.append(.removeProfile(name))
        }
        planBook.remove(profile: name)
        requests.remove(profile: name)
        let follows = profiles.contains { $0.name == configuredProfiles.unknownDevices } ? configuredProfiles.unknownDevices : Self.defaultProfile
        return "Removed profile \(name): its rules, its wallet (\(SpanWords.describe(seconds: balance)) of credit), ledger, events, plans and requests are deleted. "
            + "Its devices now follow profile \(follows)."
    }
}

// MARK: Devices

extension HelperEngine {
    /// The profile a device follows, decided exactly as for its DNS queries (SPEC §9a: "the device
    /// asking is identified as DNS identifies it"): MAC through the neighbour table, then address
    /// or network, then `unknown_devices`. For the household page; cheap and never blocks.
    public nonisolated func profileName(forClient client: ClientIP) -> String {
        let enforcement = box.enforcement
        let index = enforcement.router.profile(for: client)
        return enforcement.profileNames.indices.contains(index) ? enforcement.profileNames[index] : Self.defaultProfile
    }
}

// MARK: - The configuration file's profiles and unknown devices (`ConfiguredProfiles`, `ConfigurationPlan`)

extension HelperEngine {
    /// Checks the configuration file's profiles without changing anything: names, zones, knobs and
    /// client networks, each error naming the profile (ARCHITECTURE principle 5: a reload is
    /// validated whole before any of it applies).
    public nonisolated static func validateConfiguredProfiles(default first: ProfileSettings, profiles: [ProfileSettings]) throws(EngineError) {
        try ConfigurationPlan.validate(default: first, profiles: profiles)
    }

    /// Puts the configuration file's profiles in force, at start and at every reload (SPEC §9, §6,
    /// §11): each is added when new (with its starter credit, like `scrolloff profile add`) or has
    /// its zone, preset, knobs, owners and client networks replaced, committed to the database like
    /// any other change and then republished, so DNS routes clients by the new networks at once.
    /// Profiles the file does not name (made with the CLI) are left as they are.
    ///
    /// Anti-tamper (SPEC §3, §11): running cooldowns and edit locks are instants or follow from the
    /// windows themselves, so no knob change ends them early. A change that would loosen a profile
    /// (`ProfileWeakening`) while any lock of that profile is in force is held back whole, except
    /// for its owners, exactly as a weakening from the CLI is refused inside a cooldown; it is
    /// reported with the time the locks end and applied by the timer then (or by the next reload or
    /// start, whichever comes first). Clients go by longest prefix, so networks added or widened
    /// anywhere (a new `0.0.0.0/0`, a rename that wins the tie, a /32 inside a locked /24) can also
    /// take a locked profile's devices: such a change waits for that profile's locks the same way
    /// (a new profile is not created yet; `ProfileWeakening.takeovers`). Changes that only tighten
    /// apply at once (strengthening is always allowed).
    ///
    /// The file's daily allowances (`[[allowances]]`, SPEC §4a) are applied in the same commit: each
    /// one the file names is set to the file's amounts on every weekday (`Supervision.configure`),
    /// lowering at once and raising only where no lock holds; a raise held back is reported and
    /// applied by the timer with the profiles. Allowances the file does not name are left as they are.
    @discardableResult
    public func applyConfiguredProfiles(default first: ProfileSettings, profiles configured: [ProfileSettings],
                                        allowances configuredAllowances: [ConfiguredAllowance] = []) throws(EngineError) -> ProfileConfigurationReport {
        try Self.validateConfiguredProfiles(default: first, profiles: configured)
        // SPEC §12: the rule changes this applies are the configuration file's.
        actorOverride = ChangeActor.configurationFile
        defer { actorOverride = nil }
        configuredProfiles.names = Set(configured.map(\.name))
        let wanted = [first] + configured
        // Entries as the CLI resolves them, so the file and `allowance set` name the same allowance.
        var allowances: [(profile: String, entries: [EntryID], seconds: [Int64])] = []
        for a in configuredAllowances {
            let entries = try a.entries.isEmpty ? [] : resolve(a.entries).map(\.0)
            allowances.append((a.profile, entries, Allowance(entries: entries, secondsByWeekday: a.secondsByWeekday).secondsByWeekday))
        }
        let differs = wanted.contains { s in profiles.first(where: { $0.name == s.name })?.settings != s }
            || allowances.contains { a in
                profiles.first(where: { $0.name == a.profile })?.allowances.first(where: { $0.key == Allowance.key(for: a.entries) })?.secondsByWeekday
                    != (a.seconds.allSatisfy { $0 == 0 } ? nil : a.seconds)
            }
        guard differs else {
            configuredProfiles.heldBack = nil
            return ProfileConfigurationReport()
        }
        var earliestUnlock: Instant?
        let report = try perform { (w: inout Work) throws(EngineError) -> ProfileConfigurationReport in
            let plan = try ConfigurationPlan(wanted: wanted, in: w, neighbours: neighbours, box: box)
            earliestUnlock = plan.earliestUnlock
            var report = try plan.apply(to: &w)
            for a in allowances {
                // A profile whose creation waits for a lock gets its allowances when it is created.
                guard let i = w.profiles.firstIndex(where: { $0.name == a.profile }) else { continue }
                let outcome = Supervision.configure(&w.profiles[i], entries: a.entries, secondsByWeekday: a.seconds, at: w.now, into: &w.change)
                if let applied = outcome.applied { report.allowances.append("\(a.profile): \(applied)") }
                if let until = outcome.heldUntil {
                    earliestUnlock = min(earliestUnlock ?? until, until)
                    report.heldBack.append(
                        "profile \(a.profile): raising the daily allowance for \(Supervision.words(a.entries)) waits until "
                            + "\(HelperEngine.logTime(until)) while a cooldown or lock is in force; it applies then by itself")
                }
            }
            return report
        }
        // The file stays the wish: what waits is applied by the timer when the lock ends.
        configuredProfiles.heldBack = earliestUnlock.map { HeldBackProfiles(first: first, profiles: configured, allowances: configuredAllowances, due: $0) }
        if configuredProfiles.heldBack != nil { wake() }
        return report
    }

    /// The timer's share: once the lock that held part of the file's profiles back has ended, the
    /// same profiles are applied again (anything still locked waits for its own lock's end).
    func applyHeldBackProfilesIfDue(now: Instant) {
        guard let held = configuredProfiles.heldBack, now >= held.due else { return }
        do {
            let report = try applyConfiguredProfiles(default: held.first, profiles: held.profiles, allowances: held.allowances)
            if !report.changed.isEmpty {
                logger.notice("held-back configuration applied now that its lock has ended",
                              metadata: ["profiles": "\(report.changed.joined(separator: ","))"])
            }
            for line in report.heldBack { logger.notice("configuration still held back", metadata: ["detail": "\(line)"]) }
        } catch .invalid(let why) {
            // Valid when held back, invalid now: a tzdata update removed a zone the file names, say.
            // Retrying cannot help until the file changes, so give up once, loudly, rather than
            // logging the same error every minute; the profiles in force stay as they are.
            configuredProfiles.heldBack = nil
            logger.error("the held-back configuration can no longer apply; edit the configuration file and reload (systemctl reload scrolloff-dns)",
                         metadata: ["error": "\(why)"])
        } catch {
            // A failed write (a full disk): try again in a minute rather than at once, which would
            // spin the timer.
            configuredProfiles.heldBack?.due = now + .seconds(60)
            logger.error("applying the held-back configuration failed; trying again in a minute", metadata: ["error": "\(error)"])
        }
    }

    /// An instant as the log shows it: ISO 8601 in UTC.
    package nonisolated static func logTime(_ t: Instant) -> String {
        Date(timeIntervalSince1970: Double(t.millisecondsSince1970) / 1000).ISO8601Format()
    }
}

// MARK: Unknown devices

extension HelperEngine {
    /// `[profile] unknown_devices` (SPEC §9): the profile clients no profile claims follow, so a
    /// household can make unknown devices strict. A name that is not a profile (removed since)
    /// falls back to the default profile. Republishes at once, except that moving unknown devices
    /// out of a profile while one of its locks holds (a cooldown, a curfew edit lock, a focus
    /// session) would free them, so, like a configured client change that takes devices from a
    /// locked profile, it waits for that lock and then applies by itself.
    /// - Returns: what waits and until when, for the log; nil when it applied.
    @discardableResult
    public func setUnknownDevices(_ name: String) -> String? {
        configuredProfiles.heldUnknownDevices = nil
        guard name != configuredProfiles.unknownDevices else { return nil }
        let now = advanceClock()
        if let current = profiles.first(where: { $0.name == configuredProfiles.unknownDevices }), let until = ProfileWeakening.locksEnd(of: current, at: now) {
            configuredProfiles.heldUnknownDevices = (name, until)
            wake()
            return "unknown_devices = \"\(name)\" waits until \(Self.logTime(until)): unknown devices follow profile \(configuredProfiles.unknownDevices), "
                + "which has a cooldown or curfew edit lock in force; it applies then by itself"
        }
        // Kept in the store, so after a restart the next change is checked against what was in force.
        do {
            _ = try commitReturning(StateChange([.saveSetting(key: ConfiguredProfiles.unknownDevicesKey, value: name)]), now: now)
        } catch {
            // Routing follows the file even when the disk refuses; the next start reads the file again.
            logger.error("unknown_devices could not be saved; it applies until the helper stops", metadata: ["error": "\(error)"])
        }
        configuredProfiles.unknownDevices = name
        rebuild(now: now)
        return nil
    }

    /// The timer's share of `setUnknownDevices`: the held change applies once the lock has ended
    /// (or waits again for a lock made since).
    func applyHeldUnknownDevicesIfDue(now: Instant) {
        guard let held = configuredProfiles.heldUnknownDevices, now >= held.due else { return }
        if let still = setUnknownDevices(held.name) { logger.notice("configuration still held back", metadata: ["detail": "\(still)"]) }
    }
}

// MARK: Pause and daily allowances (SPEC §4a, §5a)

extension HelperEngine {
    /// `scrolloff pause --profile P (DURATION | --until HH:MM) [--reason TEXT]` (SPEC §5a): every name
    /// but the always-allow list answers blocked for the profile's devices until the end. It only
    /// tightens, so a disk that refuses the write does not refuse it: it holds in memory (and is
    /// written when writes succeed again).
    public func pause(profile: String, for length: Span? = nil, until time: LocalTime? = nil, reason: String? = nil) throws(EngineError) -> PauseReading {
        let actor = currentActor
        return try perform(holdIfWriteFails: true) { (w: inout Work) throws(EngineError) -> PauseReading in
            let i = try profileIndex(profile, in: w.profiles)
            let end: Instant
            switch (length, time) {
            case (let l?, nil):
                guard l > .zero, l <= Pause.longest else {
                    throw .invalid("A pause lasts 1 s to \(SpanWords.describe(Pause.longest)); it was \(SpanWords.describe(l)).")
                }
                end = w.now + l
            case (nil, let t?):
                guard let e = Pause.next(t, after: w.now, zoneID: w.profiles[i].settings.timeZoneID) else {
                    throw .invalid("Profile \(profile) has no known time zone to read \(t) in.")
                }
                end = e
            default:
                throw .invalid("Give a pause either a length (45m) or an end (--until 19:30), not both and not neither.")
            }
            let pause = try Supervision.pause(&w.profiles[i], until: end, reason: reason, by: actor, at: w.now, into: &w.change)
            return PauseReading(profile: profile, pause: pause,
                                message: "Paused \(profile) for \(SpanWords.describe(pause.end - pause.start)): every name but the allow lists is blocked on its devices.",
                                now: w.now)
        }.0
    }

    /// `scrolloff resume --profile P` (SPEC §5a): lifts the pause now.
    public func resume(profile: String) throws(EngineError) -> PauseReading {
        try perform { (w: inout Work) throws(EngineError) -> PauseReading in
            let i = try profileIndex(profile, in: w.profiles)
            let old = try Supervision.resume(&w.profiles[i], at: w.now, into: &w.change)
            return PauseReading(profile: profile, pause: nil,
                                message: "Resumed \(profile) \(SpanWords.describe(old.end - w.now)) early; its usual rules apply again.", now: w.now)
        }
    }

    /// The pause in force on `profile`, if any (`status`, the household page).
    public func pauseInForce(profile: String) throws(EngineError) -> Pause? {
        let now = advanceClock()
        return profiles[try profileIndex(profile, in: profiles)].rules.pause(at: now)
    }

    /// `scrolloff allowance set DURATION [--entries A,B] [--days D]` (SPEC §4a).
    public func setAllowance(seconds: Int64, entries words: [String], days: Weekdays, profile: String) throws(EngineError) -> AllowanceSummary {
        guard seconds > 0, seconds <= Allowance.longest.wholeSeconds else {
            throw .invalid("A daily allowance is 1 s to \(SpanWords.describe(Allowance.longest)); it was \(seconds) s. `scrolloff allowance clear` removes one.")
        }
        try Self.checkAllowanceEntries(words)
        let entries = try words.isEmpty ? [] : resolve(words).map(\.0)
        do throws(EngineError) {
            let a = try perform { (w: inout Work) throws(EngineError) -> Allowance in
                let i = try profileIndex(profile, in: w.profiles)
                return try Supervision.set(&w.profiles[i], seconds: seconds, entries: entries, days: days, at: w.now, into: &w.change)
            }
            // Read after the commit, whose settling granted today's share.
            var summary = try allowances(profile: profile)
            summary.message = "Daily allowance for \(profile): \(a.words)."
            return summary
        } catch {
            try recordRefusal(error, profile: profile, action: "allowance set")
            throw error
        }
    }

    /// `scrolloff allowance clear [--entries A,B] [--days D]` (SPEC §4a): a tightening, always allowed.
    public func clearAllowance(entries words: [String], days: Weekdays?, profile: String) throws(EngineError) -> AllowanceSummary {
        try Self.checkAllowanceEntries(words)
        let entries = try words.isEmpty ? [] : resolve(words).map(\.0)
        try perform { (w: inout Work) throws(EngineError) in
            let i = try profileIndex(profile, in: w.profiles)
            try Supervision.clear(&w.profiles[i], entries: entries, days: days, at: w.now, into: &w.change)
        }
        var summary = try allowances(profile: profile)
        summary.message = "Cleared the daily allowance for \(Supervision.words(entries))."
        return summary
    }

    static func checkAllowanceEntries(_ words: [String]) throws(EngineError) {
        guard words.count <= Allowance.mostEntries else {
            throw .invalid("An allowance names at most \(Allowance.mostEntries) entries; this one named \(words.count). "
                           + "Name a category instead, such as social, or set one allowance per group.")
        }
    }

    /// `scrolloff allowance list` (SPEC §4a), to the second (the wallet is brought to now on a copy).
    public func allowances(profile: String) throws(EngineError) -> AllowanceSummary {
        let now = advanceClock()
        var p = profiles[try profileIndex(profile, in: profiles)]
        _ = p.account.advance(to: now, blockInForce: p.blockInForce(at: now))
        return allowanceSummary(p, at: now, message: p.allowances.isEmpty ? "Profile \(profile) has no daily allowance." : "")
    }

    func allowanceSummary(_ p: ProfileRuntime, at now: Instant, message: String) -> AllowanceSummary {
        AllowanceSummary(profile: p.name, allowances: p.allowances.map { Supervision.reading($0, in: p, at: now) }, message: message, now: now)
    }
}
