import Enforcement
import Foundation
import ScrollOffCore
import Store

/// What the configuration file's profiles change now and what of it waits (SPEC §3, §9, §11),
/// planned on a command's working copy before anything is written: a change that would loosen a
/// profile while one of its locks is in force keeps only its new owners, and a change whose client
/// networks would take devices from a locked profile waits for that profile's locks.
struct ConfigurationPlan {
    /// The settings each profile gets now, by name; a name not here changes nothing now.
    var planned: [String: ProfileSettings] = [:]
    var report = ProfileConfigurationReport()
    /// When the earliest lock that held a change back ends; nil when nothing waits.
    var earliestUnlock: Instant?
    /// What the file asks, in its order (the order the changes are written and reported in).
    private let wanted: [ProfileSettings]

    /// - Parameters:
    ///   - wanted: the default profile's settings first, then the file's other profiles.
    ///   - neighbours, box: where a MAC new to a profile is found now, and how it is routed now.
    init(wanted: [ProfileSettings], in w: Work, neighbours: NeighbourCache, box: EnforcementBox) throws(EngineError) {
        self.wanted = wanted
        // What each named profile gets now: its own loosening waits for its own locks…
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
                    + "\(HelperEngine.logTime(until)) while a cooldown or curfew edit lock is in force; it applies then by itself")
            planned[settings.name] = Self.ownersOnly(of: settings, over: old)
        }
        // …and a change whose networks would take devices from a locked profile waits for that one's.
        try holdBackTakeovers(in: w, neighbours: neighbours, box: box)
    }

    /// Puts the planned settings into the working copy and its change, in the file's order: a new
    /// profile with its starter credit, like `scrolloff profile add`; an existing one gets its
    /// settings, networks and credit policy. Returns the report with the profiles changed.
    func apply(to w: inout Work) throws(EngineError) -> ProfileConfigurationReport {
        var report = report
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
                w.profiles = HelperEngine.ordered(w.profiles + [fresh])
                continue
            }
            w.profiles[i].settings = settings
            w.profiles[i].networks = rebuilt.networks
            // The owner's allowances (SPEC §4a) are the profile's own, not the file's: they stay.
            let allowances = w.profiles[i].allowances
            w.profiles[i].account.policy = rebuilt.account.policy
            w.profiles[i].allowances = allowances
        }
        return report
    }

    /// Checks the configuration file's profiles without changing anything (`validateConfiguredProfiles`).
    static func validate(default first: ProfileSettings, profiles: [ProfileSettings]) throws(EngineError) {
        guard first.name == HelperEngine.defaultProfile else {
            throw .invalid("The default profile must be named “\(HelperEngine.defaultProfile)”, not “\(first.name)”.")
        }
        guard first.clientCIDRs.isEmpty else {
            throw .invalid("The default profile covers every client no other profile claims; give client networks to another profile instead.")
        }
        var names: Set<String> = [HelperEngine.defaultProfile]
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

    /// Holds back, until the locks end, every planned change whose client networks would take
    /// devices from a profile with a lock in force (`ProfileWeakening.takeovers`): a new profile is
    /// not created yet, an existing one keeps its old settings but for its owners. Holding one back
    /// changes the routing the others are checked against, so this repeats until nothing moves;
    /// each round holds back at least one more change, so it ends.
    private mutating func holdBackTakeovers(in w: Work, neighbours: NeighbourCache, box: EnforcementBox) throws(EngineError) {
        while true {
            var after: [ProfileWeakening.RoutedProfile] = []
            for p in w.profiles {
                let networks = try planned[p.name].map { s throws(EngineError) in try Self.networks(of: s) } ?? p.networks
                after.append(.init(name: p.name, networks: networks))
            }
            for (name, s) in planned where !w.profiles.contains(where: { $0.name == name }) {
                after.append(.init(name: name, networks: try Self.networks(of: s)))
            }
            after = after.filter { $0.name == HelperEngine.defaultProfile } + after.filter { $0.name != HelperEngine.defaultProfile }.sorted { $0.name < $1.name }
            let takeovers = ProfileWeakening.takeovers(current: w.profiles, after: after, at: w.now) + Self.macTakeovers(planned, in: w, neighbours: neighbours, box: box)
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
                    "profile \($0.keeper) (such as \($0.address)), which keeps them while a cooldown or curfew edit lock is in force until \(HelperEngine.logTime($0.until))"
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
    private static func macTakeovers(_ planned: [String: ProfileSettings], in w: Work, neighbours: NeighbourCache,
                                     box: EnforcementBox) -> [ProfileWeakening.Takeover] {
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
    private static func ownersOnly(of wish: ProfileSettings, over old: ProfileSettings) -> ProfileSettings? {
        guard old.ownerUIDs != wish.ownerUIDs || old.memberUIDs != wish.memberUIDs else { return nil }
        var kept = old
        kept.ownerUIDs = wish.ownerUIDs
        kept.memberUIDs = wish.memberUIDs
        return kept
    }

    private static func networks(of s: ProfileSettings) throws(EngineError) -> [ClientNetwork] {
        let networks = try ClientNetwork.networks(in: s.clientCIDRs)
        return networks
    }
}
