import DomainLists
import Enforcement
import Foundation
import ListFetch
import LowPriority
import ScrollOffCore

// Lists downloaded from URLs have one owner: the control side's `ListsController` (files,
// metadata, refresh). `HelperControl` parses its copies with `parseLists` after every change and
// hands them to `setLists` (below), which keeps its state in `ListsLifecycle`. The store keeps no list rows.

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

    /// Puts freshly fetched lists in force (`HelperControl` calls this after every change of the
    /// `ListsController`, with the copies parsed by `parseLists`). Each list is an entry named like
    /// its source, blocked like a service. When this returns, these lists (or those of a later
    /// call) are in force.
    ///
    /// The matcher for them is built off the engine (`LowPriorityWork.perform`, under `SCHED_IDLE`
    /// within a refresh, SPEC §9): every other engine call (a person's block, `status`, a window
    /// edge) runs meanwhile against the lists and matcher in force, which stay until the new
    /// matcher is installed. It is installed only if the matcher inputs it was built for are still
    /// the inputs then; if something changed them meanwhile (a custom domain, a reload's allowed
    /// hosts) it is built once more off the engine, then in place. Calls that overlap end with the
    /// latest call's lists in force: an earlier call's build is dropped and it waits for the latest.
    ///
    /// - Parameters:
    ///   - names: every configured list, fetched or not; nil = the names of `lists`. A configured
    ///     list not fetched yet is still an entry (blocking it blocks nothing until it arrives).
    ///   - hosts: the hosts of the list URLs, always allowed so blocking can never cut off its own
    ///     list updates (SPEC §1); nil = keep the hosts set before.
    ///   - keeping: lists whose new copy failed to parse: their previous copy stays in force
    ///     (ARCHITECTURE principle 5) when it is in memory; a list kept as its stored copy is read
    ///     again at the build this causes; if that copy no longer reads, the matcher in force
    ///     stays (fail closed, `install`).
    ///   - copies: where the stored copies of `lists` lie (`parseLists`). A list with a copy is
    ///     kept as that file and read again when a later rebuild needs it; its rules here serve
    ///     this build only. A list without one (tests, in-memory rules) is kept as rules.
    ///   - order: the lists snapshot's place (`ListsSnapshot.sequence`): a call for a snapshot older
    ///     than one already handed in (its parse finished later) changes nothing and returns once
    ///     the newer one's lists are in force. nil = not from a snapshot (tests).
    ///
    /// `lists` is consumed: a list kept as its copy is held from here on only by the `ListHandoff`
    /// its matcher build takes it from, so the build frees its pages as the names go in (SPEC §9,
    /// memory per name). A caller that wants that hands its last reference (`consume`).
    public func setLists(_ lists: consuming [String: RuleList], names: [String]? = nil, hosts: [String]? = nil, keeping: Set<String> = [],
                         copies: [String: ListCopy] = [:], order: Int? = nil) async {
        let asked = !ListRefreshContext.isRefresh
        if asked { listsLifecycle.callsAsked += 1 }
        defer { if asked { listsLifecycle.callsAsked -= 1 } }
        guard listsLifecycle.admit(order: order) else {
            await waitForListsInForce(listsLifecycle.ticket)
            return
        }
        let ticket = listsLifecycle.nextTicket()
        // What an earlier call still building asked for is the previous state for this one.
        let previous = listsLifecycle.pending ?? listsLifecycle.inForce
        let (state, freshRules) = ListsLifecycle.handed(consume lists, names: names, hosts: hosts, keeping: keeping, copies: copies,
                                                        previous: previous, generation: ticket)
        listsLifecycle.pending = state
        let nextLists = state.lists
        var inputs = matcherInputs(now: advanceClock(), lists: state)
        for attempt in 1...2 {
            let (catalog, probe, wanted) = (catalog, listsLifecycle.buildProbe, inputs)
            // A refresh's build waits for idle CPU unless an earlier call a person waits for now
            // ends with it (`callsAsked`): on busy cores that person would wait for the compiler.
            let idle = ListRefreshContext.isRefresh && listsLifecycle.callsAsked == 0
            var built: (tables: MatcherTables, unreadable: [String: String])? = await ListRefreshContext.$isRefresh.withValue(idle) {
                await LowPriorityWork.perform {
                    probe?(wanted)
                    return MatcherTables.build(catalog: catalog, lists: nextLists, fresh: freshRules, inputs: wanted)
                }
            }
            guard ticket == listsLifecycle.ticket else {
                // A later call asked for other lists meanwhile: its lists go in force, not these.
                // This matcher goes now, not after the wait: with the one in force and the later
                // call's, three matchers of a large list would be held at once. It is freed on
                // the releaser thread, not on the engine (`Retirement`).
                if let matcher = built?.tables.matcher { Retirement.shared.retire(matcher) }
                built = nil
                ListsLifecycle.retire(freshRules)
                await waitForListsInForce(ticket)
                return
            }
            let now = advanceClock()
            let current = matcherInputs(now: now, lists: state)
            if current == inputs {
                listsLifecycle.inForce = state
                publish(now: now, trimming: install(built!, inputs: inputs))
                break
            }
            if attempt == 2 {
                // Still moving: build in place, holding the engine, as for any other change.
                listsLifecycle.inForce = state
                listsLifecycle.freshRules = freshRules
                rebuild(now: now)
                listsLifecycle.freshRules = [:]
                break
            }
            inputs = current
        }
        listsLifecycle.pending = nil
        for waiter in listsLifecycle.putInForce(ticket) { waiter.resume() }
        ListsLifecycle.retire(freshRules)
    }

    /// Returns once the lists of call `ticket` or of a later one are in force.
    private func waitForListsInForce(_ ticket: Int) async {
        guard !listsLifecycle.isInForce(ticket) else { return }
        await withCheckedContinuation { listsLifecycle.wait(for: ticket, $0) }
    }

    /// Runs `probe` on the worker thread before each list build of `setLists`, with the inputs
    /// it builds for (tests: hold a build to prove that the engine answers meanwhile).
    func setListBuildProbe(_ probe: (@Sendable (MatcherInputs) -> Void)?) {
        listsLifecycle.buildProbe = probe
    }

    func matcherInputs(now: Instant) -> MatcherInputs {
        matcherInputs(now: now, lists: listsLifecycle.inForce)
    }

    /// The inputs of a matcher for `lists` and everything else as it is now.
    func matcherInputs(now: Instant, lists fetched: FetchedLists) -> MatcherInputs {
        var named = Set<EntryID>()
        for p in profiles { named.formUnion(p.namedEntries(at: now)) }
        return ListsLifecycle.matcherInputs(lists: fetched, named: named, catalog: catalog, configuredAllowed: configuredAllowed)
    }

    // MARK: Checks before a list change that could open blocked names

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
                try ListsLifecycle.checkRemoval(of: id, in: p, at: now)
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
            do throws(Refusal) { try ListsLifecycle.checkRemoval(of: id, in: p, at: now) } catch { return error }
        }
        return nil
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
