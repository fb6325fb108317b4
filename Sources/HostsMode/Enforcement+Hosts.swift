import DomainLists
import Enforcement
import ScrollOffCore

extension Enforcement {
    /// The names hosts mode writes for `profile` at `now` (SPEC §10): every block rule of every
    /// entry blocking then, from the same snapshot timelines the DNS answers use (one decision path).
    ///
    /// A hosts file has no wildcards, so a rule writes its own name only; the curated lists name the
    /// common subdomains themselves. `*.example.com` rules (subdomains only) have no name to write.
    /// A name the always-allow lists keep open is left out (allow beats block, SPEC §1).
    ///
    /// During a strict curfew DNS blocks every name but the always-allowed ones (SPEC §2); a hosts
    /// file cannot say "everything", so it says what it can: every name of every entry (all curated
    /// services, fetched lists and custom domains), whether or not a rule names the entry.
    public func hostsNames(profile: Int, at now: Instant) -> [String] {
        var names: [String] = []
        for i in hostsEntries(profile: profile, at: now) {
            // A fetched list is read from its stored copy here (the engine keeps no second copy);
            // one that no longer reads writes nothing, as it blocks nothing in the matcher either.
            guard i < tables.entryRules.count, let rules = try? tables.entryRules[i].load() else { continue }
            for position in rules.indices where rules.action(at: position) == .block && rules.scope(at: position) != .subdomainsOnly {
                let name = rules[position].name.text
                if !matcher.match(name).isAllowed { names.append(name) }
            }
        }
        return names
    }

    /// The entry indices whose names hosts mode writes at `now`: the blocking ones, or every entry
    /// during a strict curfew.
    func hostsEntries(profile: Int, at now: Instant) -> [Int] {
        if isStrictCurfew(profile: profile, now: now) { return Array(tables.entries.indices) }
        return tables.entries.indices.filter { snapshot.kind(profile: profile, entry: $0, now: now).isBlocking }
    }

    /// Whether `profile` has a strict curfew, in force or still to come: hosts mode cannot express one.
    func hasStrictCurfew(profile: Int) -> Bool {
        guard profile < states.count else { return false }
        return states[profile].strictCurfewUntil != nil || states[profile].strictCurfewNextEdge != nil
    }
}
