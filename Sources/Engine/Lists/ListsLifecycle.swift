import DomainLists
import Enforcement
import LowPriority
import ScrollOffCore

/// Fetched lists as `setLists` puts them in force: what the matcher inputs take from them.
struct FetchedLists: Sendable {
    /// By lowercased name.
    var lists: [String: ListRules] = [:]
    /// Every configured list, fetched or not.
    var names: Set<String> = []
    /// Hosts of the configured list URLs, always allowed (SPEC §1).
    var hosts: [String] = []
    /// Changes with every `setLists` (its ticket), so a matcher is rebuilt for new rules.
    var generation = 0
}

/// The fetched lists' side of the engine: the lists in force, the call that is building a matcher
/// for newer ones off the engine, and the order in which overlapping `setLists` calls end. The
/// engine owns one and runs `setLists` (HelperEngine+Rules.swift) with it; what can be decided
/// without the engine's clock, store or matcher is decided here.
///
/// Overlapping calls: each call takes a ticket; the latest ticket's lists win, and an earlier call
/// waits (`wait(for:)`) until the lists of its ticket or a later one are in force.
struct ListsLifecycle {
    /// The lists in force: their copies, every configured name and the hosts of their URLs.
    var inForce = FetchedLists()
    /// Rules `setLists` was handed, for an in-place matcher build it falls back to; dropped after it.
    var freshRules: [String: ListHandoff] = [:]
    /// Matcher inputs whose build was refused because a list in force could not be read again;
    /// not tried again until their lists part changes (a new list generation brings a new copy).
    /// A custom domain meanwhile builds only the custom part, on the lists part in force.
    var unbuildableInputs: MatcherInputs?
    /// The lists of the latest `setLists` while its matcher is built off the engine.
    var pending: FetchedLists?
    /// `setLists` calls so far; the latest call's lists win over an earlier call still building.
    private(set) var ticket = 0
    /// The latest `setLists` call whose lists are in force.
    private(set) var ticketInForce = 0
    /// Earlier `setLists` calls waiting for a later call's lists to be in force.
    private var waiters: [(ticket: Int, continuation: CheckedContinuation<Void, Never>)] = []
    /// `setLists` calls under way that are not a refresh's (a person's `lists add`, a configured
    /// source's first fetch): each ends with the latest call's lists, so while one is under way a
    /// refresh's build is waited for and runs at nice 10, not under `SCHED_IDLE`.
    var callsAsked = 0
    /// The newest lists snapshot handed to `setLists` (`ListsSnapshot.sequence`).
    private(set) var order = 0
    /// Tests: runs on the worker thread before each matcher build of `setLists`.
    var buildProbe: (@Sendable (MatcherInputs) -> Void)?

    /// Takes the snapshot `order` of a call: false when a newer snapshot was handed in already
    /// (its parse finished first), so this call changes nothing. Calls are ordered by when they
    /// reach the engine, snapshots by when they were taken: a refresh's parse under SCHED_IDLE can
    /// finish after a later `lists add`'s, and its older snapshot would then drop the added list.
    mutating func admit(order: Int?) -> Bool {
        guard let order else { return true }
        guard order > self.order else { return false }
        self.order = order
        return true
    }

    /// The ticket of a new call; every call before it now ends with this call's lists or a later one's.
    mutating func nextTicket() -> Int {
        ticket += 1
        return ticket
    }

    /// Whether the lists of call `ticket` or of a later one are in force.
    func isInForce(_ ticket: Int) -> Bool { ticketInForce >= ticket }

    /// Keeps a call waiting until `isInForce(ticket)`; `putInForce` resumes it.
    mutating func wait(for ticket: Int, _ continuation: CheckedContinuation<Void, Never>) {
        waiters.append((ticket, continuation))
    }

    /// Call `ticket`'s lists are in force: returns the waiting calls that may go on now.
    mutating func putInForce(_ ticket: Int) -> [CheckedContinuation<Void, Never>] {
        ticketInForce = max(ticketInForce, ticket)
        let ready = waiters.filter { $0.ticket <= ticketInForce }.map(\.continuation)
        waiters.removeAll { $0.ticket <= ticketInForce }
        return ready
    }

    /// The lists a `setLists` call puts in force, and the handoffs its matcher build reads the new
    /// rules from. Each list is moved out of `lists` into its handoff, so that, kept as a copy,
    /// nothing else holds its rules (sorted: of two names that differ only in case, the same one
    /// wins; the other is retired). `previous` is what the call replaces: a list in `keeping`
    /// keeps its copy from there.
    static func handed(_ lists: consuming [String: RuleList], names: [String]?, hosts: [String]?, keeping: Set<String>,
                       copies: [String: ListCopy], previous: FetchedLists, generation: Int)
        -> (state: FetchedLists, fresh: [String: ListHandoff]) {
        var fresh: [String: ListHandoff] = [:]
        var next: [String: ListRules] = [:]
        for name in lists.keys.sorted() {
            guard let rules = lists.removeValue(forKey: name) else { continue }
            let key = name.lowercased()
            guard next[key] == nil else {
                retire([name: rules])
                continue
            }
            next[key] = copies[name].map(ListRules.copy) ?? .rules(rules)
            fresh[key] = ListHandoff(rules)
        }
        for name in keeping { if next[name.lowercased()] == nil, let old = previous.lists[name.lowercased()] { next[name.lowercased()] = old } }
        let state = FetchedLists(lists: next, names: Set((names ?? Array(next.keys)).map { $0.lowercased() }).union(next.keys),
                                 hosts: hosts ?? previous.hosts, generation: generation)
        return (state, fresh)
    }

    /// The inputs of a matcher for `fetched` and the profiles' named entries and allowed hosts.
    static func matcherInputs(lists fetched: FetchedLists, named: Set<EntryID>, catalog: Catalog, configuredAllowed: [String]) -> MatcherInputs {
        // A configured source not fetched yet is still an entry (with no names), never a custom domain.
        let listNames = Set(fetched.lists.keys).union(fetched.names)
        let custom = named.filter { catalog.service(id: $0.rawValue) == nil && !listNames.contains($0.rawValue) }.sorted()
        return MatcherInputs(listNames: listNames.sorted(), listGeneration: fetched.generation, customDomains: custom,
                             extraAllowed: Array(Set(configuredAllowed)).sorted(), listHosts: Array(Set(fetched.hosts)).sorted())
    }

    /// Hands the parsed lists of a `setLists` call to the releaser thread, which frees each
    /// storage when the caller's copies have gone too: tens of MB at 1,000,000 names that were
    /// otherwise freed on the engine or a task of the caller (`Retirement`, SPEC §9).
    static func retire(_ lists: [String: RuleList]) {
        for rules in lists.values where rules.storageBytes >= PageRelease.step { Retirement.shared.retire(rules.storageOwner) }
    }

    /// The same for what no build took from its handoff (a build a later call made moot); a list
    /// a build took was freed by that build, as it was read, off the engine.
    static func retire(_ handoffs: [String: ListHandoff]) {
        for handoff in handoffs.values {
            if let rules = handoff.take(), rules.storageBytes >= PageRelease.step { Retirement.shared.retire(rules.storageOwner) }
        }
    }

    /// Whether undoing the rules of `p` that name the list `id` is allowed now (SPEC §3,
    /// §11): removing a list empties its entry, so every name on it would open at once. Each rule
    /// that names the list is checked the way undoing that rule is: a block against its cooldown
    /// (as `unblock`), a schedule against its curfew edit lock and cooldown (as removing an entry
    /// from it), a focus session until it ends.
    /// Whether a rule of `p` names the list: removing it then opens names there, so only someone
    /// who may loosen `p`'s rules may remove it, whichever profile they ask through.
    static func names(_ id: EntryID, in p: ProfileRuntime) -> Bool {
        p.blocks.contains { $0.entry == id } || p.schedules.contains { $0.entries.contains(id) }
            || p.focusSessions.contains { $0.entries.contains(id) }
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
}
