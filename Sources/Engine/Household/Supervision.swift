import ScrollOffCore
import Store

/// An owner's pause (SPEC §5a) as `pause`, `resume` and `status` answer it.
public struct PauseReading: Hashable, Sendable {
    public var profile: String
    /// The pause in force now; nil when the profile is not paused.
    public var pause: Pause?
    public var message: String
    public var now: Instant
}

/// One daily allowance (SPEC §4a) with what is left of it today and until when raising it is refused.
public struct AllowanceReading: Hashable, Sendable {
    public var allowance: Allowance
    /// Seconds left today; nil when it gives nothing today.
    public var leftTodaySeconds: Int64?
    /// Seconds it gives today.
    public var todaySeconds: Int64
    /// The latest lock on raising it: its own cooldown or a lock of an entry it covers.
    public var lockedUntil: Instant?
}

/// `allowance set|clear|list`: the profile's allowances after the command.
public struct AllowanceSummary: Hashable, Sendable {
    public var profile: String
    public var allowances: [AllowanceReading]
    public var message: String
    public var now: Instant
}

/// The rules of pausing and of daily allowances, apart from the actor: what a pause or an allowance
/// change does to one profile, and the locks that refuse raising an allowance (SPEC §3, §4a, §5a).
enum Supervision {
    /// A pause of `p` from `now` until `end`; a later pause replaces the one in force.
    static func pause(_ p: inout ProfileRuntime, until end: Instant, reason: String?, by actor: String, at now: Instant,
                      into change: inout StateChange) throws(EngineError) -> Pause {
        guard end > now else { throw .invalid("A pause must end after now; give a length such as 45m or a later time with --until.") }
        guard end - now <= Pause.longest else {
            throw .invalid("A pause lasts at most \(SpanWords.describe(Pause.longest)) (it was \(SpanWords.describe(end - now))); pause again when it ends.")
        }
        let pause = Pause(start: now, end: end, reason: reason.flatMap { $0.isEmpty ? nil : $0 }, by: actor)
        p.pause = pause
        change.append(.savePause(profile: p.name, pause))
        return pause
    }

    /// Lifts `p`'s pause now. An owner's tool over someone else's devices, so no cooldown applies.
    static func resume(_ p: inout ProfileRuntime, at now: Instant, into change: inout StateChange) throws(EngineError) -> Pause {
        guard let pause = p.rules.pause(at: now) else {
            throw .refused(Refusal(rule: .notBlocked, subject: p.name, message: "Profile \(p.name) is not paused, so there is nothing to resume."))
        }
        p.pause = nil
        change.append(.removePause(profile: p.name))
        return pause
    }

    /// Gives `entries` (empty = any entry) `seconds` a day on `days`, keeping the other days as
    /// they were. Raising it is a loosening: refused while its own cooldown or a lock of an entry it
    /// covers holds (SPEC §3.3 "Locks bind everyone"); lowering it starts its cooldown.
    static func set(_ p: inout ProfileRuntime, seconds: Int64, entries: [EntryID], days: Weekdays, at now: Instant,
                    into change: inout StateChange) throws(EngineError) -> Allowance {
        let key = Allowance.key(for: entries)
        let old = p.allowances.first { $0.key == key } ?? Allowance(entries: entries, secondsByWeekday: [])
        var new = old.setting(seconds, on: days)
        if old.isLoosened(by: new), let lock = lockedUntil(old, in: p, at: now) {
            throw .refused(Refusal(rule: .cooldown, subject: lock.subject, opensAt: lock.until,
                                   message: "Raising the daily allowance for \(Self.words(entries)) is a loosening, and \(lock.subject) is locked; "
                                       + "lowering it or clearing it is allowed now."))
        }
        if old.isTightened(by: new) { new.cooldownUntil = max(old.cooldownUntil ?? now, now + p.knobs.cooldown) }
        p.allowances.removeAll { $0.key == key }
        if new.isEmpty {
            change.append(.removeAllowance(profile: p.name, entries: entries))
        } else {
            p.allowances.append(new)
            p.allowances.sort { $0.key < $1.key }
            change.append(.saveAllowance(profile: p.name, new))
        }
        return new
    }

    /// Removes the allowance for `entries` on `days` (every day when nil): a tightening, always allowed.
    static func clear(_ p: inout ProfileRuntime, entries: [EntryID], days: Weekdays?, at now: Instant,
                      into change: inout StateChange) throws(EngineError) {
        let key = Allowance.key(for: entries)
        guard p.allowances.contains(where: { $0.key == key }) else {
            throw .notFound("Profile \(p.name) has no daily allowance for \(Self.words(entries)); `scrolloff allowance list` shows the ones it has.")
        }
        _ = try set(&p, seconds: 0, entries: entries, days: days ?? .daily, at: now, into: &change)
    }

    /// Sets the allowance for `entries` to the configuration file's `secondsByWeekday` (SPEC §4a):
    /// each day lowered at once (starting its cooldown, as `set` does), each day raised only when no
    /// lock holds, so the file cannot undo an owner's tightening inside its cooldown any more than
    /// the CLI can. Returns the allowance as it now is in words when anything changed (nil =
    /// unchanged), and the end of the lock that holds a raise back.
    static func configure(_ p: inout ProfileRuntime, entries: [EntryID], secondsByWeekday wanted: [Int64], at now: Instant,
                          into change: inout StateChange) -> (applied: String?, heldUntil: Instant?) {
        let key = Allowance.key(for: entries)
        let old = p.allowances.first { $0.key == key } ?? Allowance(entries: entries, secondsByWeekday: [])
        let target = Allowance(entries: entries, secondsByWeekday: wanted)
        guard old.secondsByWeekday != target.secondsByWeekday else { return (nil, nil) }
        let lock = old.isLoosened(by: target) ? lockedUntil(old, in: p, at: now) : nil
        var new = old
        for n in 0..<7 where target.secondsByWeekday[n] <= old.secondsByWeekday[n] || lock == nil {
            new.secondsByWeekday[n] = target.secondsByWeekday[n]
        }
        guard new.secondsByWeekday != old.secondsByWeekday else { return (nil, lock?.until) }
        if old.isTightened(by: new) { new.cooldownUntil = max(old.cooldownUntil ?? now, now + p.knobs.cooldown) }
        p.allowances.removeAll { $0.key == key }
        if new.isEmpty {
            change.append(.removeAllowance(profile: p.name, entries: entries))
            return ("no daily allowance for \(words(entries))", lock?.until)
        }
        p.allowances.append(new)
        p.allowances.sort { $0.key < $1.key }
        change.append(.saveAllowance(profile: p.name, new))
        return (new.words, lock?.until)
    }

    /// The latest lock that refuses raising `a` now, and what holds it.
    static func lockedUntil(_ a: Allowance, in p: ProfileRuntime, at now: Instant) -> (subject: String, until: Instant)? {
        var latest: (subject: String, until: Instant)?
        func consider(_ subject: String, _ until: Instant?) {
            guard let until, until > now, latest.map({ until > $0.until }) ?? true else { return }
            latest = (subject, until)
        }
        consider("the allowance", a.cooldownUntil)
        let rules = p.rules
        let covered = a.entries.isEmpty ? p.namedEntries(at: now) : a.entries
        for e in covered { consider(e.rawValue, rules.lockedUntil(of: e, at: now)) }
        return latest
    }

    static func reading(_ a: Allowance, in p: ProfileRuntime, at now: Instant) -> AllowanceReading {
        let weekday = p.calendar.weekday(of: now)
        let today = a.seconds(onWeekday: weekday)
        let wallet = p.account.wallet
        var left: Int64?
        if today > 0 {
            let day = p.calendar.day(of: now)
            left = wallet.state.batches.filter { $0.allowanceKey == a.key && $0.origin == .allowance(day) }.reduce(0) { $0 + $1.remaining }
        }
        return AllowanceReading(allowance: a, leftTodaySeconds: left, todaySeconds: today, lockedUntil: lockedUntil(a, in: p, at: now)?.until)
    }

    static func words(_ entries: [EntryID]) -> String {
        entries.isEmpty ? "any entry" : entries.map(\.rawValue).sorted().joined(separator: ", ")
    }
}
