import DomainLists
import Enforcement
import Foundation
import ScrollOffCore

// Lists downloaded from URLs have one owner: the control side's `ListsController` (files,
// metadata, refresh). `HelperControl` parses its copies with `parseLists` after every change and
// hands them to `setLists` (HelperEngine.swift). The store keeps no list rows.

extension HelperEngine {
    /// Parses fetched list copies (name → file path) for `setLists`, off the engine so that a large
    /// list never holds up commands. A list over its bad-line budget is left out and reported; the
    /// caller keeps its previous copy in force (ARCHITECTURE principle 5). `budget` must be the one
    /// the copies were validated with when stored (`ListsConfiguration.badLineBudget`).
    ///
    /// `held` (name → file) are the names a refresh dropped while a rule held the list (SPEC §3):
    /// they stay in force with the copy, so a list under a lock never shrinks. A held file that is
    /// not there holds nothing; one a later refresh writes is read with the copy it goes with. A
    /// held file that does not parse fails its list as a whole, keeping the previous rules in force.
    ///
    /// `reusing` holds the rules the store's validator parsed from a copy it just accepted: that
    /// copy is taken from there instead of being parsed again (SPEC §9). `copies` says where each
    /// list's rules lie on disk, for `setLists` to read them again at a later rebuild.
    public nonisolated static func parseLists(
        files: [String: String], held: [String: String] = [:], budget: BadLineBudget, reusing parsed: ParsedCopies? = nil
    ) -> (lists: [String: RuleList], copies: [String: ListCopy], failures: [String: String]) {
        var lists: [String: RuleList] = [:]
        var copies: [String: ListCopy] = [:]
        var failures: [String: String] = [:]
        for (name, path) in files {
            let copy = ListCopy(path: path, heldPath: held[name], budget: budget)
            do {
                lists[name] = try copy.rules(parsed: parsed?.take(path))
                copies[name] = copy
            } catch {
                failures[name] = error.description
            }
        }
        return (lists, copies, failures)
    }

    /// Which uids may act on which profile (SPEC §11), for the control server's SO_PEERCRED check.
    /// An empty list means the profile names no owner: members of the `scrolloff` group may act on it.
    public func profileOwners() -> [String: [UInt32]] {
        Dictionary(uniqueKeysWithValues: profiles.map { ($0.name, $0.settings.ownerUIDs) })
    }

    /// Owners and members of every profile, by name (SPEC §11 roles).
    public func profileAccess() -> [String: ProfileAccess] {
        Dictionary(uniqueKeysWithValues: profiles.map { ($0.name, ProfileAccess(owners: $0.settings.ownerUIDs, members: $0.settings.memberUIDs)) })
    }
}
