import DomainLists
import ScrollOffCore

/// The checks the list controller asks before a list change that could open blocked names.
extension HelperEngine {
    /// Refuses removing the list `name` while a profile's rule holds it (SPEC §3, §11): removing a
    /// list empties its entry, so every name on it would open at once. Each rule that names the
    /// list is checked the way undoing that rule is: a block against its cooldown (as `unblock`),
    /// a schedule against its curfew edit lock and cooldown (as removing an entry from it), a focus
    /// session until it ends. A list no rule names, or whose rules may be undone now, may go.
    /// A refusal is kept as an event, like any refused edit.
    public func checkListRemoval(_ name: String) throws(EngineError) {
        let now = advanceClock()
        let id = EntryID(name.lowercased())
        for p in profiles {
            do throws(Refusal) {
                try Self.checkRemoval(of: id, in: p, at: now)
            } catch {
                try recordRefusal(.refused(error), profile: p.name, action: "lists rm")
                throw .refused(error)
            }
        }
    }

    /// The rule that holds the list `name` now (as `checkListRemoval` asks), without recording a
    /// refusal: asked before every refresh, which may then add names but not drop them.
    public func listHold(_ name: String) -> Refusal? {
        let now = advanceClock()
        let id = EntryID(name.lowercased())
        for p in profiles {
            do throws(Refusal) { try Self.checkRemoval(of: id, in: p, at: now) } catch { return error }
        }
        return nil
    }

    static func checkRemoval(of id: EntryID, in p: ProfileRuntime, at now: Instant) throws(Refusal) {
        if let block = p.blocks.first(where: { $0.entry == id }) { try ChangeRules.checkUnblock(block, at: now) }
        for s in p.schedules where s.entries.contains(id) {
            var without = s
            without.entries.remove(id)
            if without.entries.isEmpty && !s.kind.isStrict {
                // A schedule left with no entries is as good as deleted.
                try ChangeRules.checkDelete(s, at: now)
            } else {
                _ = try ChangeRules.edit(from: s, to: without, at: now, cooldown: p.knobs.cooldown)
            }
        }
        for f in p.focusSessions where f.entries.contains(id) { try ChangeRules.checkEndFocus(f, at: now) }
    }

    /// The entries whose names cover `host` (itself or a parent) in the matcher in force: the
    /// catalog's services, fetched lists and custom domains. Empty when no entry lists it.
    /// A list URL's host becomes always-allowed (SPEC §1), so a list may not come from such a host:
    /// adding it would open that name for everyone.
    public nonisolated func entriesCovering(host: String) -> [EntryID] {
        let enforcement = box.enforcement
        let result = enforcement.matcher.match(host)
        guard result.entrySet != .none else { return [] }
        return enforcement.entries(ofSet: result.entrySet.rawValue)
    }
}
