import Enforcement
import Foundation
import ScrollOffCore
import Store

/// One profile as the engine holds it between commands: its settings, rules and credit account,
/// plus the bookkeeping the timers need. Plain value: a command works on a copy and the engine
/// keeps the copy only after the store has committed it.
package struct ProfileRuntime: Sendable {
    var settings: ProfileSettings
    var networks: [ClientNetwork]
    /// The MAC addresses among its clients (SPEC §9), matched through the neighbour table.
    var macs: [UInt64] { settings.clientCIDRs.compactMap(MACAddress.parse) }
    var entries: [StoredEntry]
    var blocks: [Block]
    var schedules: [Schedule]
    var focusSessions: [FocusSession]
    /// An owner's pause (SPEC §5a), in force or over; nil when none is stored.
    var pause: Pause?
    var account: CreditAccount
    /// Start of the stretch with a block in force not yet written as protected time (SPEC §7).
    var protectedSince: Instant?
    /// Curfew reminders due after this instant have not been emitted yet (SPEC §2).
    var reminderCursor: Instant

    var name: String { settings.name }
    /// The profile's knobs, as its wallet holds them: one copy, so the cooldown and the wallet
    /// can never disagree after a reload.
    var knobs: Knobs { account.policy.knobs }
    /// The profile's zone (SPEC §2, §4), as its wallet holds it.
    var calendar: LocalCalendar { account.policy.calendar }
    /// The owner's daily allowances (SPEC §4a), as the wallet holds them: one copy, so the wallet
    /// grants exactly what the profile says.
    var allowances: [Allowance] {
        get { account.policy.allowances }
        set { account.policy.allowances = newValue }
    }

    /// The rules half, with the wallet's running grants (the two are kept as one list).
    var rules: ProfileRules {
        ProfileRules(blocks: blocks, schedules: schedules, focusSessions: focusSessions, grants: account.wallet.grantsInUse, pause: pause)
    }

    /// Every entry a stored row or a rule in force of the profile names at `t`, sorted. A focus
    /// session that is over names nothing any more: it blocks nothing (SPEC §2), so its entries
    /// need no status line, no matcher slot (a custom domain) and no place in a new focus session.
    func namedEntries(at t: Instant) -> [EntryID] {
        var ids = Set(entries.map(\.id))
        ids.formUnion(namedEntriesOfRules(at: t))
        return ids.sorted()
    }

    /// Entries named by a block, a schedule or a focus session that is not over at `t` (stored
    /// entry rows aside): an entry none of these names may leave the profile.
    func namedEntriesOfRules(at t: Instant) -> Set<EntryID> {
        var ids = Set(blocks.map(\.entry))
        for s in schedules { ids.formUnion(s.entries) }
        for f in focusSessions where f.end > t { ids.formUnion(f.entries) }
        return ids
    }

    /// SPEC §4 abstinence input: at least one block is in force for the profile now (an entry
    /// blocked, in curfew, or blocked-but-opened by a grant; or a strict curfew).
    func blockInForce(at t: Instant) -> Bool {
        let rules = self.rules
        if rules.strictCurfew(at: t) != nil || rules.pause(at: t) != nil { return true }
        for id in namedEntries(at: t) {
            // The state alone: its next change is not needed here, and finding it walks edges.
            switch rules.state(of: id, at: t) {
            case .blocked, .curfew, .open: return true
            case .none, .scheduled: continue
            }
        }
        return false
    }

    /// When a curfew covering `entry` that is in force at `t` ends, for the wallet's and ladder's
    /// curfew refusal (SPEC §2: nothing opens an entry during a curfew).
    func curfewEnd(of entry: EntryID, at t: Instant) -> Instant? {
        var end: Instant?
        for s in schedules where s.enabled && s.kind.isCurfew && s.covers(entry) {
            if let o = s.occurrence(containing: t), end.map({ o.end > $0 }) ?? true { end = o.end }
        }
        // A pause closes every entry as a curfew does (SPEC §5a).
        if let pause = rules.pause(at: t), end.map({ pause.end > $0 }) ?? true { end = pause.end }
        return end
    }

    /// Builds the runtime from a stored profile; `now` seeds a fresh account.
    static func make(_ stored: StoredProfile, now: Instant) throws(EngineError) -> ProfileRuntime {
        var p = try fresh(stored.settings, now: now, account: stored.account)
        p.entries = stored.entries
        p.blocks = stored.blocks
        p.schedules = stored.schedules
        p.focusSessions = stored.focusSessions
        p.pause = stored.pause
        p.allowances = stored.allowances
        return p
    }

    /// A profile with no rules yet and, unless `account` is given, a fresh account as of `now`.
    static func fresh(_ s: ProfileSettings, now: Instant, account stored: CreditAccountState? = nil) throws(EngineError) -> ProfileRuntime {
        let knobs: Knobs
        do { knobs = try Knobs.resolve(preset: s.preset, overrides: s.overrides) } catch {
            throw .invalid("Profile \(s.name): \(error.description)")
        }
        guard let calendar = LocalCalendar(identifier: s.timeZoneID) else {
            throw .invalid("Profile \(s.name): “\(s.timeZoneID)” is not a known IANA time zone; use a name like Europe/Berlin.")
        }
        let networks = try ClientNetwork.networks(in: s.clientCIDRs)
        let account = CreditAccount(state: stored ?? CreditAccountState(asOf: now),
                                    policy: CreditPolicy(knobs: knobs, calendar: calendar))
        return ProfileRuntime(
            settings: s, networks: networks, entries: [],
            blocks: [], schedules: [], focusSessions: [], pause: nil,
            account: account, protectedSince: nil, reminderCursor: now)
    }

    /// The default profile's zone when none is configured: the system's (SPEC §2).
    static var systemTimeZoneID: String { TimeZone.current.identifier }
}
