import Enforcement
import Foundation
import ScrollOffCore
import Store

/// What `applyConfiguredProfiles` did, for the reload's one log line.
public struct ProfileConfigurationReport: Sendable, Equatable {
    /// Profiles added or whose settings changed.
    public var changed: [String] = []
    /// Changes kept back because they would loosen a profile while a lock is in force, in words.
    public var heldBack: [String] = []

    public init(changed: [String] = [], heldBack: [String] = []) {
        self.changed = changed
        self.heldBack = heldBack
    }
}

/// Profiles from the configuration file, part of which waits for a lock to end.
struct HeldBackProfiles: Sendable {
    var first: ProfileSettings
    var profiles: [ProfileSettings]
    /// When the earliest lock that held a change back ends.
    var due: Instant
}

extension HelperEngine {
    /// Checks the configuration file's profiles without changing anything: names, zones, knobs and
    /// client networks, each error naming the profile (ARCHITECTURE principle 5: a reload is
    /// validated whole before any of it applies).
    public nonisolated static func validateConfiguredProfiles(default first: ProfileSettings, profiles: [ProfileSettings]) throws(EngineError) {
        guard first.name == defaultProfile else {
            throw .invalid("The default profile must be named “\(defaultProfile)”, not “\(first.name)”.")
        }
        guard first.clientCIDRs.isEmpty else {
            throw .invalid("The default profile covers every client no other profile claims; give client networks to another profile instead.")
        }
        var names: Set<String> = [defaultProfile]
        for p in [first] + profiles {
            guard !p.name.isEmpty, p.name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
                throw .invalid("“\(p.name)” cannot be a profile name; use letters, digits, - and _.")
            }
            if p.name != first.name || p != first {
                guard names.insert(p.name).inserted else {
                    throw .invalid("Profile “\(p.name)” is defined twice; merge the two into one [[profiles]] table.")
                }
            }
            // Zone, knobs and networks, checked exactly as a running profile is built.
            _ = try ProfileRuntime.fresh(p, now: Instant(millisecondsSince1970: 0))
        }
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
    @discardableResult
    public func applyConfiguredProfiles(default first: ProfileSettings, profiles configured: [ProfileSettings]) throws(EngineError) -> ProfileConfigurationReport {
        try Self.validateConfiguredProfiles(default: first, profiles: configured)
        // SPEC §12: the rule changes this applies are the configuration file's.
        actorOverride = ChangeActor.configurationFile
        defer { actorOverride = nil }
        configuredProfileNames = Set(configured.map(\.name))
        let wanted = [first] + configured
        let differs = wanted.contains { s in profiles.first(where: { $0.name == s.name })?.settings != s }
        guard differs else {
            heldBackProfiles = nil
            return ProfileConfigurationReport()
        }
        var earliestUnlock: Instant?
        let report = try perform { (w: inout Work) throws(EngineError) -> ProfileConfigurationReport in
            var report = ProfileConfigurationReport()
            // What each named profile gets now: its own loosening waits for its own locks…
            var planned: [String: ProfileSettings] = [:]
            for settings in wanted {
                guard let i = w.profiles.firstIndex(where: { $0.name == settings.name }) else {
                    planned[settings.name] = settings
                    continue
                }
                let old = w.profiles[i].settings
                guard old != settings else { continue }
                let loosenings = ProfileWeakening.loosenings(from: old, to: settings)
                guard !loosenings.isEmpty, let until = ProfileWeakening.locksEnd(of: w.profiles[i], at: w.now) else {
                    planned[settings.name] = settings
                    continue
                }
                earliestUnlock = min(earliestUnlock ?? until, until)
                report.heldBack.append(
                    "profile \(settings.name): \(loosenings.joined(separator: "; ")) waits until "
                        + "\(Self.logTime(until)) while a cooldown or curfew edit lock is in force; it applies then by itself")
                planned[settings.name] = Self.ownersOnly(of: settings, over: old)
            }
            // …and a change whose networks would take devices from a locked profile waits for that one's.
            try holdBackTakeovers(&planned, in: w, earliestUnlock: &earliestUnlock, report: &report)
            for settings in wanted {
                guard let settings = planned[settings.name] else { continue }
                let rebuilt = try ProfileRuntime.fresh(settings, now: w.now)
                w.change.append(.saveProfile(settings))
                report.changed.append(settings.name)
                guard let i = w.profiles.firstIndex(where: { $0.name == settings.name }) else {
                    // New: with its starter credit, like `scrolloff profile add`.
                    var fresh = rebuilt
                    let starter = fresh.account.grantStarter(at: w.now)
                    w.change.record(starter, account: fresh.account.state, profile: settings.name)
                    w.profiles = Self.ordered(w.profiles + [fresh])
                    continue
                }
                w.profiles[i].settings = settings
                w.profiles[i].networks = rebuilt.networks
                w.profiles[i].account.policy = rebuilt.account.policy
            }
            return report
        }
        // The file stays the wish: what waits is applied by the timer when the lock ends.
        heldBackProfiles = earliestUnlock.map { HeldBackProfiles(first: first, profiles: configured, due: $0) }
        if heldBackProfiles != nil { wake() }
        return report
    }

    /// The timer's share: once the lock that held part of the file's profiles back has ended, the
    /// same profiles are applied again (anything still locked waits for its own lock's end).
    func applyHeldBackProfilesIfDue(now: Instant) {
        guard let held = heldBackProfiles, now >= held.due else { return }
        do {
            let report = try applyConfiguredProfiles(default: held.first, profiles: held.profiles)
            if !report.changed.isEmpty {
                logger.notice("held-back configuration applied now that its lock has ended",
                              metadata: ["profiles": "\(report.changed.joined(separator: ","))"])
            }
            for line in report.heldBack { logger.notice("configuration still held back", metadata: ["detail": "\(line)"]) }
        } catch .invalid(let why) {
            // Valid when held back, invalid now: a tzdata update removed a zone the file names, say.
            // Retrying cannot help until the file changes, so give up once, loudly, rather than
            // logging the same error every minute; the profiles in force stay as they are.
            heldBackProfiles = nil
            logger.error("the held-back configuration can no longer apply; edit the configuration file and reload (systemctl reload scrolloff-dns)",
                         metadata: ["error": "\(why)"])
        } catch {
            // A failed write (a full disk): try again in a minute rather than at once, which would
            // spin the timer.
            heldBackProfiles?.due = now + .seconds(60)
            logger.error("applying the held-back configuration failed; trying again in a minute", metadata: ["error": "\(error)"])
        }
    }

    /// Holds back, until the locks end, every planned change whose client networks would take
    /// devices from a profile with a lock in force (`ProfileWeakening.takeovers`): a new profile is
    /// not created yet, an existing one keeps its old settings but for its owners. Holding one back
    /// changes the routing the others are checked against, so this repeats until nothing moves;
    /// each round holds back at least one more change, so it ends.
    private func holdBackTakeovers(_ planned: inout [String: ProfileSettings], in w: Work,
                                   earliestUnlock: inout Instant?, report: inout ProfileConfigurationReport) throws(EngineError) {
        while true {
            var after: [ProfileWeakening.RoutedProfile] = []
            for p in w.profiles {
                let networks = try planned[p.name].map { s throws(EngineError) in try Self.networks(of: s) } ?? p.networks
                after.append(.init(name: p.name, networks: networks))
            }
            for (name, s) in planned where !w.profiles.contains(where: { $0.name == name }) {
                after.append(.init(name: name, networks: try Self.networks(of: s)))
            }
            after = after.filter { $0.name == Self.defaultProfile } + after.filter { $0.name != Self.defaultProfile }.sorted { $0.name < $1.name }
            let takeovers = ProfileWeakening.takeovers(current: w.profiles, after: after, at: w.now) + macTakeovers(planned, in: w)
            var heldAny = false
            for taker in Set(takeovers.map(\.taker)).sorted() {
                guard let wish = planned[taker] else { continue }
                let old = w.profiles.first { $0.name == taker }?.settings
                // Already back to its old networks: nothing more to hold (cannot happen, since only
                // added networks take devices, but it keeps the loop finite whatever the routing).
                guard wish.clientCIDRs != old?.clientCIDRs else { continue }
                let mine = takeovers.filter { $0.taker == taker }
                let until = mine.map(\.until).max() ?? w.now
                earliestUnlock = min(earliestUnlock ?? until, until)
                let keepers = mine.map {
                    "profile \($0.keeper) (such as \($0.address)), which keeps them while a cooldown or curfew edit lock is in force until \(Self.logTime($0.until))"
                }.joined(separator: ", and from ")
                if let old {
                    let added = wish.clientCIDRs.filter { !old.clientCIDRs.contains($0) }
                    report.heldBack.append(
                        "profile \(taker): clients \(added.joined(separator: ", ")) wait: they would take devices from \(keepers); the change applies then by itself")
                    planned[taker] = Self.ownersOnly(of: wish, over: old)
                } else {
                    report.heldBack.append(
                        "profile \(taker) is not created yet: its clients \(wish.clientCIDRs.joined(separator: ", ")) would take devices from \(keepers); it is created then by itself")
                    planned[taker] = nil
                }
                heldAny = true
            }
            guard heldAny else { return }
        }
    }

    /// Devices a MAC new to a planned profile would take from a profile with a lock in force: the
    /// addresses the kernel's neighbour table gives that MAC now, routed as they are now. A device
    /// the table does not know yet cannot be placed, so it is not held; it moves when it shows up.
    private func macTakeovers(_ planned: [String: ProfileSettings], in w: Work) -> [ProfileWeakening.Takeover] {
        var added: [(taker: String, mac: UInt64)] = []
        for (name, wish) in planned {
            let old = Set(w.profiles.first { $0.name == name }?.macs ?? [])
            for mac in wish.clientCIDRs.compactMap(MACAddress.parse) where !old.contains(mac) { added.append((name, mac)) }
        }
        guard !added.isEmpty else { return [] }
        let table = neighbours.currentTable()
        let enforcement = box.enforcement
        var found: [ProfileWeakening.Takeover] = []
        for (taker, mac) in added {
            for (address, known) in table where known == mac {
                let index = enforcement.router.profile(for: address)
                guard enforcement.profileNames.indices.contains(index) else { continue }
                let keeper = enforcement.profileNames[index]
                guard keeper != taker, let held = w.profiles.first(where: { $0.name == keeper }),
                      let until = ProfileWeakening.locksEnd(of: held, at: w.now),
                      !found.contains(where: { $0.taker == taker && $0.keeper == keeper }) else { continue }
                found.append(ProfileWeakening.Takeover(taker: taker, keeper: keeper, address: address, until: until))
            }
        }
        return found
    }

    /// The old settings with only the new owners and members, what a held-back change still
    /// applies (who may act loosens no rule); nil when neither changed.
    private nonisolated static func ownersOnly(of wish: ProfileSettings, over old: ProfileSettings) -> ProfileSettings? {
        guard old.ownerUIDs != wish.ownerUIDs || old.memberUIDs != wish.memberUIDs else { return nil }
        var kept = old
        kept.ownerUIDs = wish.ownerUIDs
        kept.memberUIDs = wish.memberUIDs
        return kept
    }

    private nonisolated static func networks(of s: ProfileSettings) throws(EngineError) -> [ClientNetwork] {
        let networks = try ClientNetwork.networks(in: s.clientCIDRs)
        return networks
    }

    /// An instant as the log shows it: ISO 8601 in UTC.
    package nonisolated static func logTime(_ t: Instant) -> String {
        Date(timeIntervalSince1970: Double(t.millisecondsSince1970) / 1000).ISO8601Format()
    }
}
