import Enforcement
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
/// - a looser knob (shorter cooldown, more peeks or tokens, a larger earn cap, …);
/// - a network added or widened in another profile (or a new one) that wins some of a locked
///   profile's devices by longest prefix or by name (`takeovers`).
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

    /// Devices a change of networks would move out of a profile with a lock in force.
    struct Takeover: Equatable {
        /// The profile that would route the address after the change.
        var taker: String
        /// The locked profile that routes it now and keeps it.
        var keeper: String
        /// One address that would move (a representative of its range).
        var address: ClientIP
        /// When the keeper's locks end (`locksEnd`).
        var until: Instant
    }

    /// One profile as a change would leave it: its name and networks.
    struct RoutedProfile {
        var name: String
        var networks: [ClientNetwork]
    }

    /// Addresses that `after` would route away from a profile of `current` whose locks are in
    /// force (SPEC §3, §11), the devices a new, renamed or widened profile would take.
    ///
    /// Clients go to the longest matching prefix, ties to the profile first by name (SPEC §9,
    /// `ClientRouter`), so a network added anywhere can win addresses from any profile: the
    /// default profile's unclaimed ones (`0.0.0.0/0`), a locked profile's whole network (the same
    /// prefix under a name that sorts first) or one device of it (a /32 inside its /24). Only
    /// networks that are new to their profile are probed, since nothing else can gain addresses.
    /// Inside such a network both routers are constant between the edges of the networks nested
    /// in it, so probing its first address and every nested network's first address and the one
    /// right after it sees every address that moves.
    ///
    /// - Parameters:
    ///   - current: the profiles in force, default first (index 0 routes unclaimed clients).
    ///   - after: the same and any new profiles as the change would leave them, in the same order.
    static func takeovers(current: [ProfileRuntime], after: [RoutedProfile], at t: Instant) -> [Takeover] {
        let before = ClientRouter(networks: current.map(\.networks))
        let router = ClientRouter(networks: after.map(\.networks))
        let everyNetwork = current.flatMap(\.networks) + after.flatMap(\.networks)
        var locks: [Int: Instant?] = [:]
        var found: [Takeover] = []
        for profile in after {
            let old = current.first { $0.name == profile.name }?.networks ?? []
            for added in profile.networks where !old.contains(where: { $0.sameNetwork(as: added) }) {
                var probes = [added.first]
                for nested in everyNetwork where added.strictlyContains(nested) {
                    probes.append(nested.first)
                    if let next = nested.afterLast, added.contains(next) { probes.append(next) }
                }
                for address in probes {
                    let from = before.profile(for: address), to = router.profile(for: address)
                    guard current.indices.contains(from), after.indices.contains(to),
                          current[from].name != after[to].name else { continue }
                    let until = locks[from] ?? locksEnd(of: current[from], at: t)
                    locks[from] = until
                    guard let until else { continue }
                    let takeover = Takeover(taker: after[to].name, keeper: current[from].name, address: address, until: until)
                    if !found.contains(where: { $0.taker == takeover.taker && $0.keeper == takeover.keeper }) { found.append(takeover) }
                }
            }
        }
        return found
    }
}
