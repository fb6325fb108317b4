// ControlAPI only for `ScheduleRequest`, the plain request `addSchedule` takes as the wire carries it.
import ControlAPI
import DomainLists
import Enforcement
import Foundation
import ListFetch
import LowPriority
import ScrollOffCore
import Store

extension HelperEngine {
    // MARK: Entries

    /// What one word of `block WORD…` names (SPEC §1): a service id, every service of a category,
    /// or one custom domain (normalized: lowercase, A-labels, no trailing dot).
    func resolve(_ words: [String]) throws(EngineError) -> [(EntryID, StoredEntry.Kind)] {
        var out: [(EntryID, StoredEntry.Kind)] = []
        var seen = Set<EntryID>()
        for word in words {
            let trimmed = word.trimmingCharacters(in: .whitespaces)
            var found: [(EntryID, StoredEntry.Kind)]
            if let services = catalog.resolve(trimmed) {
                found = services.map { (EntryID($0.id), .service) }
            } else if isListName(trimmed) {
                // A fetched list is blocked by its name, like a service (the store has two kinds).
                found = [(EntryID(trimmed), .service)]
            } else if trimmed.contains("."), let name = try? DomainName(trimmed) {
                found = [(EntryID(name.text), .domain)]
            } else {
                throw .notFound("“\(word)” is not a service, a category or a domain.\(didYouMean(trimmed, categories: true)) Try `scrolloff services` for the list, or write a domain like news.example.com.")
            }
            for f in found where seen.insert(f.0).inserted { out.append(f) }
        }
        guard !out.isEmpty else { throw .invalid("Name at least one service, category or domain.") }
        return out
    }

    /// Whether `word` names a configured list source (fetched yet or not).
    func isListName(_ word: String) -> Bool {
        let name = word.lowercased()
        return lists[name] != nil || listNames.contains(name)
    }

    /// The entry id `word` names for a single-entry command (`use`, `peek`, `unblock`).
    func resolveOne(_ word: String) throws(EngineError) -> EntryID {
        if let service = catalog.service(id: word) { return EntryID(service.id) }
        if isListName(word) { return EntryID(word) }
        if word.contains("."), let name = try? DomainName(word) { return EntryID(name.text) }
        throw .notFound("“\(word)” is not a service or a domain.\(didYouMean(word, categories: false)) Try `scrolloff services` for the list.")
    }

    /// " Did you mean instagram?" when one service id (or category, or list name) is near `word`
    /// (`NearestWord`), else "". Only names that would have been accepted in its place are offered.
    func didYouMean(_ word: String, categories: Bool) -> String {
        var names = catalog.services.map(\.id) + listNames.sorted() + lists.keys.sorted()
        if categories { names += catalog.categories.map(\.rawValue) }
        return NearestWord.suggestion(for: word, among: names).map { " Did you mean \($0)?" } ?? ""
    }

    /// `scrolloff block ENTRY… [--reason TEXT]`: blocks around the clock (SPEC §2 "earning mode")
    /// and starts or extends each entry's cooldown (SPEC §3). Blocking again is strengthening, so
    /// it is always allowed.
    public func block(_ words: [String], reason: String? = nil, profile: String = HelperEngine.defaultProfile) throws(EngineError) -> BlockOutcome {
        let resolved = try resolve(words)
        return try perform { (w: inout Work) throws(EngineError) -> BlockOutcome in
            let i = try profileIndex(profile, in: w.profiles)
            var p = w.profiles[i]
            for (id, kind) in resolved {
                if !p.entries.contains(where: { $0.id == id }) {
                    let entry = StoredEntry(id: id, kind: kind, added: w.now)
                    p.entries.append(entry)
                    w.change.append(.saveEntry(profile: p.name, entry))
                }
                let existing = p.blocks.first { $0.entry == id }
                let block = ChangeRules.block(id, existing: existing, at: w.now, cooldown: p.knobs.cooldown, reason: reason)
                p.blocks.removeAll { $0.entry == id }
                p.blocks.append(block)
                w.change.append(.saveBlock(profile: p.name, block))
            }
            w.profiles[i] = p
            let ids = resolved.map(\.0)
            let names = ids.map(\.rawValue).joined(separator: ", ")
            return BlockOutcome(entries: ids.map { Self.entryReading(p, $0, at: w.now) },
                               message: "Blocked \(names). It holds for at least \(SpanWords.describe(p.knobs.cooldown)) before it can be undone.",
                               now: w.now)
        }
    }

    /// `scrolloff unblock ENTRY…`: refused while any named block's cooldown runs (SPEC §3); the
    /// refusal is recorded as an `editRefused` event so insights can count rules that held.
    public func unblock(_ words: [String], profile: String = HelperEngine.defaultProfile) throws(EngineError) -> BlockOutcome {
        let resolved = try resolve(words)
        do throws(EngineError) {
            return try perform { (w: inout Work) throws(EngineError) -> BlockOutcome in
                let i = try profileIndex(profile, in: w.profiles)
                var p = w.profiles[i]
                var removed: [EntryID] = []
                for (id, _) in resolved {
                    guard let block = p.blocks.first(where: { $0.entry == id }) else { continue }
                    do throws(Refusal) { try ChangeRules.checkUnblock(block, at: w.now) } catch { throw .refused(error) }
                    p.blocks.removeAll { $0.entry == id }
                    w.change.append(.removeBlock(profile: p.name, id))
                    removed.append(id)
                    // An entry no rule names any more leaves the profile (and a custom domain the matcher).
                    if !p.namedEntriesOfRules(at: w.now).contains(id), p.entries.contains(where: { $0.id == id }) {
                        p.entries.removeAll { $0.id == id }
                        w.change.append(.removeEntry(profile: p.name, id))
                    }
                }
                guard !removed.isEmpty else {
                    throw .refused(Refusal(rule: .notBlocked, subject: resolved.map(\.0.rawValue).joined(separator: ","),
                                           message: "\(resolved.map(\.0.rawValue).joined(separator: ", ")) had no around-the-clock block to remove."))
                }
                w.profiles[i] = p
                return BlockOutcome(entries: removed.map { Self.entryReading(p, $0, at: w.now) },
                                   message: "Unblocked \(removed.map(\.rawValue).joined(separator: ", ")). Schedules that name them still apply.",
                                   now: w.now)
            }
        } catch {
            try recordRefusal(error, profile: profile, action: "unblock")
            throw error
        }
    }

    /// Keeps a cooldown or edit-lock refusal as an `editRefused` event (SPEC §2, §3), coalesced
    /// like refused bypasses (`recordRefused`). Recording never replaces the refusal.
    func recordRefusal(_ error: EngineError, profile: String, action: String) throws(EngineError) {
        recordRefused(error, profile: profile, action: action, kind: .editRefused)
    }

    // MARK: Schedules

    /// `scrolloff schedule add NAME …` (SPEC §2, §13). A new name adds a schedule (cooldown starts);
    /// an existing name edits it, checked against the curfew edit lock and, when the edit weakens
    /// it, the cooldown (SPEC §3).
    public func addSchedule(_ request: ScheduleRequest, profile: String = HelperEngine.defaultProfile) throws(EngineError) -> ScheduleReading {
        let start: LocalTime, end: LocalTime, days: Weekdays
        do {
            start = try LocalTime.parse(request.from)
            end = try LocalTime.parse(request.to)
            days = try Weekdays.parse(request.days)
        } catch { throw .invalid(error.message) }
        let name = request.name.trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty else { throw .invalid("Give the schedule a name, such as “evenings”.") }
        let entries = request.strict && request.entries.isEmpty ? [] : try resolve(request.entries)
        do throws(EngineError) {
            return try perform { (w: inout Work) throws(EngineError) -> ScheduleReading in
                let i = try profileIndex(profile, in: w.profiles)
                var p = w.profiles[i]
                let kind: Schedule.Kind = request.strict ? .strictCurfew : (request.curfew ? .curfew : .block)
                let new = Schedule(name: name, start: start, end: end, days: days, timeZoneID: p.settings.timeZoneID,
                                   entries: Set(entries.map(\.0)), kind: kind, reason: request.reason)
                let saved: Schedule
                do throws(Refusal) {
                    if let old = p.schedules.first(where: { $0.name == name }) {
                        var edited = new
                        edited.reason = request.reason ?? old.reason
                        saved = try ChangeRules.edit(from: old, to: edited, at: w.now, cooldown: p.knobs.cooldown)
                    } else {
                        saved = try ChangeRules.add(new, at: w.now, cooldown: p.knobs.cooldown)
                    }
                    // The 16 h cap holds for curfews that join up too (SPEC §2).
                    do throws(ScheduleError) {
                        try CurfewJoin.check(p.schedules.filter { $0.name != name } + [saved], involving: name, at: w.now)
                    } catch { throw error.refusal }
                } catch { throw .refused(error) }
                for (id, kind) in entries where !p.entries.contains(where: { $0.id == id }) {
                    let entry = StoredEntry(id: id, kind: kind, added: w.now)
                    p.entries.append(entry)
                    w.change.append(.saveEntry(profile: p.name, entry))
                }
                p.schedules.removeAll { $0.name == name }
                p.schedules.append(saved)
                p.schedules.sort { $0.name < $1.name }
                w.change.append(.saveSchedule(profile: p.name, saved))
                w.profiles[i] = p
                return ScheduleReading(saved, at: w.now)
            }
        } catch {
            try recordRefusal(error, profile: profile, action: "schedule edit")
            throw error
        }
    }

    /// `scrolloff schedule list`.
    public func schedules(profile: String = HelperEngine.defaultProfile) throws(EngineError) -> [ScheduleReading] {
        let now = advanceClock()
        let p = profiles[try profileIndex(profile, in: profiles)]
        return p.schedules.map { ScheduleReading($0, at: now) }
    }

    /// `scrolloff schedule rm NAME`: refused inside a curfew's edit lock and inside the cooldown.
    public func removeSchedule(_ name: String, profile: String = HelperEngine.defaultProfile) throws(EngineError) {
        do throws(EngineError) {
            try perform { (w: inout Work) throws(EngineError) in
                let i = try profileIndex(profile, in: w.profiles)
                guard let s = w.profiles[i].schedules.first(where: { $0.name == name }) else {
                    throw .notFound("There is no schedule “\(name)”; `scrolloff schedule list` shows them.")
                }
                do throws(Refusal) { try ChangeRules.checkDelete(s, at: w.now) } catch { throw .refused(error) }
                w.profiles[i].schedules.removeAll { $0.name == name }
                w.change.append(.removeSchedule(profile: w.profiles[i].name, name: name))
            }
        } catch {
            try recordRefusal(error, profile: profile, action: "schedule rm")
            throw error
        }
    }

    // MARK: Focus

    /// `scrolloff focus DURATION [--entries A,B]` (SPEC §2): a one-off block window from now.
    /// Without entries it covers every entry the profile names.
    public func focus(length: Span, entries words: [String] = [], reason: String? = nil,
                      profile: String = HelperEngine.defaultProfile) throws(EngineError) -> FocusSession {
        let resolved = words.isEmpty ? [] : try resolve(words)
        return try perform { (w: inout Work) throws(EngineError) -> FocusSession in
            let i = try profileIndex(profile, in: w.profiles)
            var p = w.profiles[i]
            let ids = resolved.isEmpty ? Set(p.namedEntries(at: w.now)) : Set(resolved.map(\.0))
            guard !ids.isEmpty else {
                throw .invalid("A focus session needs entries: block something first, or name them with --entries instagram,tiktok.")
            }
            let id = (p.focusSessions.map(\.id).max() ?? 0) + 1
            let session: FocusSession
            do throws(ScheduleError) { session = try FocusSession(id: id, entries: ids, startingAt: w.now, length: length, reason: reason) } catch {
                throw .invalid(error.message)
            }
            for (eid, kind) in resolved where !p.entries.contains(where: { $0.id == eid }) {
                let entry = StoredEntry(id: eid, kind: kind, added: w.now)
                p.entries.append(entry)
                w.change.append(.saveEntry(profile: p.name, entry))
            }
            p.focusSessions.append(session)
            w.change.append(.saveFocusSession(profile: p.name, session))
            w.profiles[i] = p
            return session
        }
    }

    // MARK: Profiles

    /// `scrolloff profile add NAME --clients CIDR,…` (SPEC §9): a profile of its own with its own
    /// entries, schedules and wallet (and its own starter credit). Adding an existing name updates
    /// its clients.
    public func addProfile(_ name: String, clients: [String], timeZoneID: String? = nil, preset: Preset? = nil) throws(EngineError) -> [String] {
        let networks = try ClientNetwork.networks(in: clients)
        guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
            throw .invalid("“\(name)” cannot be a profile name; use letters, digits, - and _.")
        }
        return try perform { (w: inout Work) throws(EngineError) -> [String] in
            // A client belongs to one profile: the same network or MAC in two would route by
            // whichever sorts first, which nobody chose.
            let mine = Set(ClientKey.keys(clients))
            for other in w.profiles where other.name != name {
                let shared = ClientKey.keys(other.settings.clientCIDRs).filter { mine.contains($0) }
                if let first = shared.first {
                    throw .invalid("\(first) is already a client of profile \(other.name), so profile \(name) cannot claim it too; "
                        + "remove it from \(other.name) first (a client belongs to one profile).")
                }
            }
            if let i = w.profiles.firstIndex(where: { $0.name == name }) {
                w.profiles[i].settings.clientCIDRs = clients
                w.profiles[i].networks = networks
                w.change.append(.saveProfile(w.profiles[i].settings))
            } else {
                let zone = timeZoneID ?? w.profiles.first?.settings.timeZoneID ?? ProfileRuntime.systemTimeZoneID
                let settings = ProfileSettings(name: name, clientCIDRs: clients, timeZoneID: zone,
                                               preset: preset ?? w.profiles.first?.settings.preset ?? .default)
                var p = try ProfileRuntime.fresh(settings, now: w.now)
                w.change.append(.saveProfile(settings))
                let starter = p.account.grantStarter(at: w.now)
                w.change.record(starter, account: p.account.state, profile: name)
                w.profiles = Self.ordered(w.profiles + [p])
            }
            return w.profiles.map(\.name)
        }
    }

    /// `scrolloff profile list`: names and client networks, default profile first.
    /// Which uids may act on which profile (SPEC §11), for the control server's SO_PEERCRED check.
    /// An empty list means the profile names no owner: members of the `scrolloff` group may act on it.
    public func profileOwners() -> [String: [UInt32]] {
        Dictionary(uniqueKeysWithValues: profiles.map { ($0.name, $0.settings.ownerUIDs) })
    }

    /// Owners and members of every profile, by name (SPEC §11 roles).
    public func profileAccess() -> [String: ProfileAccess] {
        Dictionary(uniqueKeysWithValues: profiles.map { ($0.name, ProfileAccess(owners: $0.settings.ownerUIDs, members: $0.settings.memberUIDs)) })
    }

    public func profileList() -> [(name: String, clients: [String])] {
        profiles.map { ($0.name, $0.settings.clientCIDRs) }
    }

    // MARK: Helpers

    static func entryReading(_ p: ProfileRuntime, _ id: EntryID, at t: Instant) -> EntryReading {
        let rules = p.rules
        return EntryReading(status: rules.status(of: id, at: t), lockedUntil: rules.lockedUntil(of: id, at: t),
                            allowanceLeftSeconds: p.account.wallet.allowanceLeftSeconds(for: id, at: t),
                            aroundTheClock: rules.blocks.contains { $0.entry == id }, bypassRestsUntil: p.account.ladder.lockedUntil(id, at: t))
    }
}

/// The canonical form of a profile client, to find one claimed twice: a network as `address/len`
/// with the host bits kept as written, a MAC in lower case with colons.
package enum ClientKey {
    package static func keys(_ clients: [String]) -> [String] {
        clients.map { text in
            if let mac = MACAddress.parse(text) { return MACAddress.describe(mac) }
            return (try? ClientNetwork(parsing: text)).map(\.description) ?? text
        }
    }
}

// MARK: - Lists: the fetched lists in force and the checks before a change that could open blocked names

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
            if current.lists == inputs.lists {
                listsLifecycle.inForce = state
                // A custom domain or an allowed host that changed while the lists were built goes
                // in on top of the lists part just built (`rebuild` builds only the custom part).
                rebuild(now: now, trimming: install(built!, inputs: inputs))
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

    /// The profiles whose rules name list `name` (a block, a schedule, a focus session): removing
    /// the list loosens each of them, so the caller must be allowed to edit each (SPEC §11).
    public func profilesNamingList(_ name: String) -> [String] {
        let id = EntryID(name.lowercased())
        return profiles.filter { ListsLifecycle.names(id, in: $0) }.map(\.name)
    }

    // MARK: The household's lists

    /// Calls `handler` after every load or commit that changed `listSources` (another helper's
    /// `lists add` or `lists rm`, heard through the store): the lists controller then follows.
    public func setListSourcesHandler(_ handler: @escaping @Sendable () -> Void) { listSourcesHandler = handler }

    /// This helper's name among those sharing the store; empty when it keeps its state alone.
    public nonisolated var storeNodeName: String { store.nodeName }
    /// Where the state lives (a file, or a server and database).
    public nonisolated var storeLocation: String { store.location }

    /// Makes `source` one of the household's lists, with the event that says who added it, in one
    /// commit; decided on the latest state, so two helpers adding one name at once add it once.
    ///
    /// `mostLists` bounds how many lists there may be with this one (`[lists] max_lists`), counting
    /// the household's and `besides` lists this helper has alone (its configuration file's). It is
    /// asked in the same decision, so two helpers adding at once cannot both pass it on the count
    /// each read before the other's commit. Returns nil when added; when the bound refused it,
    /// nothing is added and the number of lists there were is returned.
    @discardableResult
    public func addListSource(_ source: ListSource, mostLists: Int = .max, besides: Int = 0) throws(EngineError) -> Int? {
        var source = source
        source.addedOn = store.nodeName
        let name = source.name
        var refusedAt: Int?
        try perform { work throws(EngineError) in
            // Checked in the commit's decision: a shared store retries it on the other helper's state.
            if let same = listSources.first(where: { $0.name.lowercased() == name.lowercased() || $0.url == source.url }) {
                throw .invalid(same.url == source.url
                    ? "That URL is already in use as list '\(same.name)'. Refresh it with `scrolloff lists update \(same.name)`."
                    : "A list named '\(same.name)' already exists. Pick another --name, or remove it first with `scrolloff lists rm \(same.name)`.")
            }
            let existing = listSources.count &+ besides
            guard existing < mostLists else { refusedAt = existing; return }
            refusedAt = nil
            work.change.append(.saveListSource(source))
            work.change.append(.appendEvent(listChangeEvent(added: true, name: name, url: source.url, at: work.now)))
        }
        if let refusedAt { return refusedAt }
        setListSources(listSources.filter { $0.name != name } + [source])
        return nil
    }

    /// The lists of this helper's files from before lists were kept in the state, carried into it
    /// once (no event: nobody added them now). Names the household has already are left as they
    /// are, except that a row of the same name and URL that names no helper (copied from a helper
    /// alone by `scrolloff-dns store copy`) becomes this helper's: the other helpers read it as
    /// another helper's, and this one, which holds its record, as its own.
    public func carryInListSources(_ sources: [ListSource]) throws(EngineError) {
        var added: [ListSource] = []
        var claimed: [ListSource] = []
        try perform { work throws(EngineError) in
            added = sources.filter { s in !listSources.contains { $0.name.lowercased() == s.name.lowercased() || $0.url == s.url } }
                .map { s in var s = s; s.addedOn = store.nodeName; return s }
            claimed = store.nodeName.isEmpty ? [] : listSources.filter { row in
                row.addedOn.isEmpty && sources.contains { $0.name == row.name && $0.url == row.url }
            }.map { row in var row = row; row.addedOn = store.nodeName; return row }
            for s in added + claimed { work.change.append(.saveListSource(s)) }
        }
        let claimedNames = Set(claimed.map(\.name))
        if !added.isEmpty || !claimed.isEmpty { setListSources(listSources.filter { !claimedNames.contains($0.name) } + added + claimed) }
    }

    /// `lists rm`: the list is gone for every helper, with the event, in one commit. The rules are
    /// asked again in the commit's decision (a lock another helper set meanwhile holds). Returns
    /// false when the household had no such list (a copy of this helper's alone).
    ///
    /// `checkedProfiles`: the profiles whose rights over the list the caller was checked for
    /// (`ListRemovalAccess`); a profile that names the list in the decision's state and is not
    /// among them (a block another helper committed after the check) refuses the removal, which
    /// would open the list's names there for someone not asked about.
    @discardableResult
    public func removeListSource(_ name: String, checkedProfiles: Set<String>? = nil) throws(EngineError) -> Bool {
        var removed = false
        try perform { work throws(EngineError) in
            let id = EntryID(name.lowercased())
            for p in work.profiles {
                do throws(Refusal) { try ListsLifecycle.checkRemoval(of: id, in: p, at: work.now) } catch { throw .refused(error) }
            }
            if let checkedProfiles,
               let newcomer = work.profiles.first(where: { !checkedProfiles.contains($0.name) && ListsLifecycle.names(id, in: $0) }) {
                throw .invalid("Profile \(newcomer.name) began to block list \(name) while it was being removed, so nothing was removed. "
                    + "Ask again with `scrolloff lists rm \(name)`: your rights over \(newcomer.name) are checked then.")
            }
            guard let source = listSources.first(where: { $0.name == name }) else { removed = false; return }
            removed = true
            work.change.append(.removeListSource(name: source.name))
            work.change.append(.appendEvent(listChangeEvent(added: false, name: source.name, url: source.url, at: work.now)))
        }
        if removed {
            // Its held names went with it (`removeListSource` deletes their row).
            heldLists.removeAll { $0.name == name }
            setListSources(listSources.filter { $0.name != name })
        }
        return removed
    }

    private func setListSources(_ sources: [ListSource]) {
        let sorted = sources.sorted { $0.name < $1.name }
        guard sorted != listSources else { return }
        listSources = sorted
        listSourcesHandler?()
    }

    /// The rule that holds the list `name` now (as `checkListRemoval` asks), without recording a
    /// refusal: asked before every refresh, which may then add names but not drop them.
    public func listHold(_ name: String) -> Refusal? {
        Self.listHold(name, in: profiles, at: advanceClock())
    }

    /// The rule of `profiles` that holds list `name` at `now`, if any.
    static func listHold(_ name: String, in profiles: [ProfileRuntime], at now: Instant) -> Refusal? {
        let id = EntryID(name.lowercased())
        for p in profiles {
            do throws(Refusal) { try ListsLifecycle.checkRemoval(of: id, in: p, at: now) } catch { return error }
        }
        return nil
    }

    // MARK: The household's held list names (SPEC §3 across helpers)

    /// Makes `rules` — names a refresh on this helper dropped while a rule held list `name` (the
    /// rule lines of its `<name>.held`) — the household's, so every helper keeps them in force,
    /// also one whose copy never had them. Held as the union with what the household holds
    /// already, so two helpers dropping different names both keep theirs; decided and committed
    /// with its event on the latest state (a stale commit is decided again on what the other
    /// helper left). Returns what the household holds after, or nil when no rule holds the list
    /// any more: then nothing is added, and this helper's names go at its next release.
    public func holdListNames(_ name: String, rules: [String]) throws(EngineError) -> HeldListSummary? {
        let wanted = Set(rules.filter { !$0.isEmpty && !$0.contains("\n") })
        // Read once before deciding: the names held may run to megabytes, and most refreshes of a
        // held list on a second helper drop names the household holds already (nothing to commit).
        var stored: HeldListNames?
        do throws(StoreError) { stored = try store.heldListNames(name) } catch { throw EngineError(error) }
        let now = advanceClock()
        guard let rule = Self.listHold(name, in: profiles, at: now) else { return nil }
        // (The rule's words count the time left, so they are not compared: only the lock's end.)
        if let stored, stored.summary.count > 0, stored.summary.until == rule.opensAt, wanted.isSubset(of: Set(stored.rules)) {
            return stored.summary
        }
        var saved: HeldListSummary?
        try perform { work throws(EngineError) in
            saved = nil
            guard let rule = Self.listHold(name, in: work.profiles, at: work.now) else { return }
            let known = heldLists.first { $0.name == name }
            // What was read is the row at this state's version unless another helper moved it since.
            if stored?.summary.revision != known?.revision {
                do throws(StoreError) { stored = try store.heldListNames(name) } catch { throw EngineError(error) }
            }
            let before: Set<String> = stored.map { $0.summary.count > 0 ? Set($0.rules) : [] } ?? []
            let union = before.union(wanted)
            let added = union.count - before.count
            let old = stored?.summary
            let holding = old.map { $0.count > 0 } ?? false
            guard added > 0 || old?.until != rule.opensAt, !union.isEmpty else {
                saved = old
                return
            }
            let summary = HeldListSummary(
                name: name, count: union.count,
                revision: added > 0 || !holding ? Self.nextHeldRevision(after: old?.revision, at: work.now) : old?.revision ?? 0,
                until: rule.opensAt, reason: rule.message, since: holding ? old?.since ?? work.now : work.now)
            work.change.append(.saveHeldListNames(HeldListNames(summary: summary, rules: union.sorted())))
            if added > 0 {
                let end = rule.opensAt.map { "until \(Self.logTime($0))" } ?? "while the rule holds"
                let through = store.nodeName.isEmpty ? "" : " on \(store.nodeName)"
                work.change.append(.appendEvent(StoredEvent(
                    profile: nil, time: work.now, kind: .listNamesHeld, entry: EntryID(name.lowercased()),
                    message: "A refresh of list \(name)\(through) dropped \(added) names while a rule holds it; they stay blocked "
                        + "on every resolver of the household \(end) (\(rule.message)). \(union.count) names held in all.")))
            }
            saved = summary
        }
        if let saved { setHeldList(saved) }
        return saved
    }

    /// Lets the household's held names of list `name` go once no rule holds it, decided on the
    /// latest state: a helper whose state is behind (it has not heard yet that a rule holds the
    /// list longer) has its commit refused as stale, reloads, and decides again, so it never lets
    /// them go early. Returns the rule that still holds the list, or nil when the names were let
    /// go (or the household held none).
    public func releaseListNames(_ name: String) throws(EngineError) -> Refusal? {
        var holding: Refusal?
        var released: HeldListSummary?
        try perform { work throws(EngineError) in
            released = nil
            holding = Self.listHold(name, in: work.profiles, at: work.now)
            guard holding == nil, var held = heldLists.first(where: { $0.name == name }), held.count > 0 else { return }
            let count = held.count
            held.count = 0
            held.revision = Self.nextHeldRevision(after: held.revision, at: work.now)
            held.until = nil
            work.change.append(.saveHeldListNames(HeldListNames(summary: held, rules: [])))
            work.change.append(.appendEvent(StoredEvent(
                profile: nil, time: work.now, kind: .listNamesReleased, entry: EntryID(name.lowercased()),
                message: "The lock on list \(name) ended: the \(count) names a refresh dropped while it held are no longer blocked.")))
            released = held
        }
        if let released { setHeldList(released) }
        return holding
    }

    /// The names the household holds of list `name`, read from the store now (the lists
    /// controller writes them into this helper's `<name>.held` when their revision moved). Not on
    /// the engine: they may run to megabytes.
    public nonisolated func heldListNames(_ name: String) throws(EngineError) -> HeldListNames? {
        do throws(StoreError) { return try store.heldListNames(name) } catch { throw EngineError(error) }
    }

    /// A revision later than `previous` and than any a row of this name had before (the trusted
    /// time in ms): a list removed and added again starts past the revisions of its old names, so a
    /// helper's file of those is never taken for the new ones.
    static func nextHeldRevision(after previous: Int64?, at now: Instant) -> Int64 {
        max((previous ?? 0) + 1, now.millisecondsSince1970)
    }

    private func setHeldList(_ summary: HeldListSummary) {
        heldLists = (heldLists.filter { $0.name != summary.name } + [summary]).sorted { $0.name < $1.name }
    }

    /// The entries whose names cover `host` (itself or a parent) in the matcher in force: the
    /// catalog's services, fetched lists and custom domains. Empty when no entry lists it.
    /// A list URL's host becomes always-allowed (SPEC §1), so a list may not come from such a host:
    /// adding it would open that name for everyone.
    /// What the catalog calls `word` (a service or a category), if anything. `block WORD` reads a
    /// catalog word before a list's name, so a list of that name could never be blocked or
    /// unblocked by its name, and its removal would meet the service's locks instead.
    public nonisolated func catalogMeaning(of word: String) -> String? {
        guard let services = catalog.resolve(word) else { return nil }
        return services.count == 1 && services[0].id == word.lowercased() ? "a service" : "a category of \(services.count) services"
    }

    public nonisolated func entriesCovering(host: String) -> [EntryID] {
        let enforcement = box.enforcement
        let result = enforcement.matcher.match(host)
        guard result.entrySet != .none else { return [] }
        return enforcement.entries(ofSet: result.entrySet.rawValue)
    }
}
