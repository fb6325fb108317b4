import ScrollOffCore
import Store

/// Which parts of a profile's new settings would loosen it, for a configuration reload while a
/// lock is in force (SPEC §3, §11).
///
/// Cooldowns and edit locks already running are stored as instants (a block's or schedule's
/// `cooldownUntil`) or follow from the schedule's own windows, so a new knob value can never end
/// them early. What a settings change can still loosen is what comes next or how windows fall:
/// - the time zone moves every window of the profile, so it can end a curfew early;
/// - a client network taken out moves those devices to the default profile's rules;
/// - a looser knob (shorter cooldown, more peeks or tokens, a larger earn cap, …).
enum ProfileWeakening {
    /// Words for each loosening part of `old` → `new`, empty when the change only tightens or
    /// changes nothing that binds (owners, stricter knobs, added networks).
    static func loosenings(from old: ProfileSettings, to new: ProfileSettings) -> [String] {
        var found: [String] = []
        if old.timeZoneID != new.timeZoneID { found.append("time zone \(old.timeZoneID) → \(new.timeZoneID)") }
        let removed = Set(old.clientCIDRs).subtracting(new.clientCIDRs)
        if !removed.isEmpty { found.append("clients \(removed.sorted().joined(separator: ", ")) taken out") }
        guard let before = try? Knobs.resolve(preset: old.preset, overrides: old.overrides),
              let after = try? Knobs.resolve(preset: new.preset, overrides: new.overrides)
        else { return found }
        let looser = looserKnobs(from: before, to: after)
        if !looser.isEmpty { found.append("looser \(looser.map(\.rawValue).joined(separator: ", "))") }
        return found
    }

    /// Knobs whose new value gives the person more room than the old one.
    static func looserKnobs(from a: Knobs, to b: Knobs) -> [Knob] {
        var knobs: [Knob] = []
        if b.cooldown < a.cooldown { knobs.append(.cooldown) }
        if b.dailyEarnCap > a.dailyEarnCap { knobs.append(.dailyEarnCap) }
        if b.rolloverDays > a.rolloverDays { knobs.append(.rolloverDays) }
        if b.freePeeksPerDay > a.freePeeksPerDay { knobs.append(.freePeeksPerDay) }
        if b.paidPeeksPerDay > a.paidPeeksPerDay { knobs.append(.paidPeeksPerDay) }
        if b.paidPeekCost < a.paidPeekCost { knobs.append(.paidPeekCost) }
        if b.peekLength > a.peekLength { knobs.append(.peekLength) }
        if b.includedTokensPerMonth > a.includedTokensPerMonth { knobs.append(.includedTokensPerMonth) }
        if b.tokenLength > a.tokenLength { knobs.append(.tokenLength) }
        if b.earnAmount > a.earnAmount { knobs.append(.earnAmount) }
        if b.earnInterval < a.earnInterval { knobs.append(.earnInterval) }
        if b.perEntryWallets && !a.perEntryWallets { knobs.append(.perEntryWallets) }
        switch (a.perEntryDailySpendCap, b.perEntryDailySpendCap) {
        case (.some, nil): knobs.append(.perEntryDailySpendCap)
        case (.some(let old), .some(let new)) where new > old: knobs.append(.perEntryDailySpendCap)
        default: break
        }
        // The starter credit is granted once, at a profile's first setup: changing it loosens nothing.
        return knobs
    }

    /// When every lock of the profile has ended: the latest block cooldown, enabled schedule
    /// cooldown, curfew edit lock (SPEC §2) and running focus session; nil when none is in force.
    static func locksEnd(of p: ProfileRuntime, at t: Instant) -> Instant? {
        var latest: Instant?
        func consider(_ until: Instant?) {
            guard let until, until > t else { return }
            if latest.map({ until > $0 }) ?? true { latest = until }
        }
        for b in p.blocks { consider(b.cooldownUntil) }
        for s in p.schedules where s.enabled {
            consider(s.cooldownUntil)
            consider(ChangeRules.curfewEditLock(of: s, at: t))
        }
        for f in p.focusSessions where f.isActive(at: t) { consider(f.end) }
        return latest
    }
}
