import DomainLists
import ScrollOffCore

extension Enforcement {
    /// The names hosts mode writes for `profile` at `now` (SPEC §10): every block rule of every
    /// entry blocking then, from the same snapshot timelines the DNS answers use (one decision path).
    ///
    /// A hosts file has no wildcards, so a rule writes its own name only; the curated lists name the
    /// common subdomains themselves. `*.example.com` rules (subdomains only) have no name to write.
    /// A name the always-allow lists keep open is left out (allow beats block, SPEC §1).
    public func hostsNames(profile: Int, at now: Instant) -> [String] {
        var names: [String] = []
        for i in tables.entries.indices where snapshot.kind(profile: profile, entry: i, now: now).isBlocking {
            guard i < tables.entryRules.count else { continue }
            let rules = tables.entryRules[i]
            for position in rules.indices where rules.action(at: position) == .block && rules.scope(at: position) != .subdomainsOnly {
                let name = rules[position].name.text
                if !matcher.match(name).isAllowed { names.append(name) }
            }
        }
        return names
    }
}
