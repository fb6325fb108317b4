import DomainLists
import LowPriority
import ScrollOffCore
import NIOConcurrencyHelpers
import Synchronization

/// The domain side of enforcement: which names belong to which entry, and which are always allowed.
/// Built only when the entries or lists change (a new custom domain, a list refresh), because
/// building walks every listed name; rule changes reuse it and rebuild only the snapshot.
///
/// In two parts (`LayeredMatcher`): the lists part (the catalog and the fetched lists) is built
/// when a list changes; a change of the custom domains or the allowed hosts builds only the custom
/// part and reuses the lists part as it is (`replacingCustom`).
public struct MatcherTables: Sendable {
    public let matcher: LayeredMatcher
    /// Entry index → entry id: catalog services in catalog order, then fetched lists by name, then
    /// custom domains sorted.
    public let entries: [EntryID]
    /// `entrySets[id]` = the entry indices of matcher set `id`, in the form the snapshot takes.
    public let entrySets: [[ScrollOffCore.EntryIndex]]
    /// The inputs the matcher was built from, to tell whether a rebuild is needed: the lists
    /// part's as that part was built, the custom part's as this one was.
    package let inputs: MatcherInputs
    /// The lists part, reused by a change of the custom part.
    package let listPart: ListPart
    /// Entry id → entry index, so a rule's entries find their slot without a scan.
    let indexOfEntry: [EntryID: Int]
    /// Every entry with no rule: `.none` for good. A profile's states start as a copy of it.
    let unruled: [EntryStatus]
    /// Entry index → the matcher sets holding it, so a snapshot build touches only the sets of the
    /// entries some rule names.
    let setsContaining: [[ScrollOffCore.EntrySetID]]
    /// Entry index → the rules of its list (a custom domain: its one name), for hosts mode, which
    /// must write names out rather than match them (SPEC §10). Shares storage with the catalog;
    /// a fetched list is its stored copy, read when hosts mode needs its names (`ListRules`).
    public let entryRules: [ListRules]

    /// The lists part on its own and the custom part built for `inputs` on top of it: the custom
    /// domains block for the entry indices after the lists part's, the allowed hosts are allowed
    /// with their subdomains.
    package init(listPart: ListPart, inputs: MatcherInputs) {
        var builder = MatcherBuilder()
        var entries = listPart.entries
        var entryRules = listPart.entryRules
        for domain in inputs.customDomains {
            // Custom domains were normalized when they were blocked; one that no longer parses
            // (a stored row edited by hand) keeps its index but matches nothing.
            if let name = try? DomainName(domain.rawValue) {
                builder.add(name, entry: DomainLists.EntryIndex(UInt32(entries.count)))
                entryRules.append(.rules(RuleList([ListRule(name: name)])))
            } else {
                entryRules.append(.empty)
            }
            entries.append(domain)
        }
        for host in inputs.extraAllowed {
            if let name = try? DomainName(host) { builder.allow(name) }
        }
        matcher = LayeredMatcher(lists: listPart.matcher, custom: builder.build())
        self.listPart = listPart
        var built = inputs
        built.lists = listPart.inputs
        self.inputs = built
        self.entries = entries
        self.entryRules = entryRules
        entrySets = matcher.entrySets.map { $0.map(\.rawValue) }
        indexOfEntry = Dictionary(entries.enumerated().map { ($0.element, $0.offset) }, uniquingKeysWith: { first, _ in first })
        unruled = entries.map { EntryStatus(entry: $0, state: .none, nextChange: nil, reason: nil) }
        setsContaining = EnforcementSnapshot.setsContaining(entrySets, entryCount: entries.count)
    }

    /// Tables that match nothing, standing for `inputs` (a `listGeneration` no lists have makes
    /// the first rebuild a whole one).
    package static func empty(_ inputs: MatcherInputs = MatcherInputs()) -> MatcherTables {
        MatcherTables(listPart: ListPart(matcher: DomainMatcher(), entries: [], entryRules: [], inputs: inputs.lists), inputs: inputs)
    }

    /// These tables with the custom part built for `inputs`' custom domains and allowed hosts, the
    /// lists part reused as it is (the same `DomainMatcher`): milliseconds where a whole build
    /// reads and builds every listed name again.
    package func replacingCustom(_ inputs: MatcherInputs) -> MatcherTables {
        MatcherTables(listPart: listPart, inputs: inputs)
    }

    /// The decision table for every profile's rules from `t` over the snapshot's horizon.
    public func snapshot(_ rules: [ProfileRules], at t: Instant) -> EnforcementSnapshot {
        EnforcementSnapshot(entrySets: entrySets, entries: entries, profiles: rules, builtAt: t,
                            indexOfEntry: indexOfEntry, setsContaining: setsContaining)
    }

    /// The state of every entry for one profile's rules at `t`: the same answer as
    /// `rules.evaluate(entries: entries, at: t)`, but only the entries a rule names are evaluated.
    /// An entry no block, schedule, focus session or grant names is `.none` with no next change
    /// whatever the time, and the catalog's entries are mostly that, so a rule change costs the
    /// profile's few rules rather than every entry, so a rule change stays cheap. A strict curfew applies only to
    /// entries another rule names (`ProfileRules.applies`), so it needs no full evaluation either.
    public func evaluate(_ rules: ProfileRules, at t: Instant) -> ProfileState {
        var statuses = unruled
        for id in rules.entriesWithRules {
            if let i = indexOfEntry[id] { statuses[i] = rules.status(of: id, at: t) }
        }
        // No entries: only the profile-wide strict-curfew fields are computed.
        let whole = rules.evaluate(entries: [], at: t)
        return ProfileState(entries: statuses, strictCurfewUntil: whole.strictCurfewUntil,
                            strictCurfewNextEdge: whole.strictCurfewNextEdge, evaluatedAt: t)
    }

    /// Builds the matcher: every catalog service, fetched list and custom domain blocks for its own
    /// entry index (in that order); every always-allow list and every host in `extraAllowed` (the
    /// helper's own names) is allowed with its subdomains, each list URL host as that exact name,
    /// and allow beats block (SPEC §1).
    ///
    /// A list's rules come from `fresh` (just parsed by `setLists`' caller) or else from its
    /// `ListRules` (a stored copy is read again). A copy that no longer reads is left out and
    /// named in `unreadable`; its entry stays, matching nothing.
    package static func build(catalog: Catalog, lists: [String: ListRules], fresh: [String: ListHandoff] = [:],
                      inputs: MatcherInputs) -> (tables: MatcherTables, unreadable: [String: String]) {
        let (part, unreadable) = ListPart.build(catalog: catalog, lists: lists, fresh: fresh, inputs: inputs.lists)
        return (MatcherTables(listPart: part, inputs: inputs), unreadable)
    }
}

/// The lists part of the matcher (`MatcherTables`): the catalog's services and the fetched lists,
/// their entries first in the entry order, and the names they allow.
package struct ListPart: Sendable {
    let matcher: DomainMatcher
    /// Entry index → id for this part's entries: services in catalog order, then lists by name.
    let entries: [EntryID]
    let entryRules: [ListRules]
    package let inputs: MatcherInputs.Lists

    /// Builds the part: every catalog service and fetched list blocks for its own entry index
    /// (in that order); every always-allow list is allowed with its subdomains and each list
    /// URL host as that exact name.
    static func build(catalog: Catalog, lists: [String: ListRules], fresh: [String: ListHandoff],
                      inputs: MatcherInputs.Lists) -> (part: ListPart, unreadable: [String: String]) {
        var builder = MatcherBuilder()
        var entries: [EntryID] = []
        var entryRules: [ListRules] = []
        var unreadable: [String: String] = [:]
        for service in catalog.services {
            builder.add(service.rules, entry: DomainLists.EntryIndex(UInt32(entries.count)))
            entries.append(EntryID(service.id))
            entryRules.append(.rules(service.rules))
        }
        let services = entries.count
        for name in inputs.listNames {
            // A list named like a catalog service blocks under the service's entry, so a rule
            // naming that word holds both sets of names. `lists add` refuses such a name, but a
            // newer catalog may bring the word, or another helper's older one let it in; as two
            // entries of one id, the rules reached only the service's and the list's names
            // answered open.
            let word = name.lowercased()
            let shared = entries[..<services].firstIndex { $0.rawValue == word }
            let index = shared ?? entries.count
            // One list's rules at a time: the packed copy is freed before the next one is read.
            do throws(ListParseError) {
                // Handed to the builder, not copied: when nothing else holds the rules (a fresh
                // parse taken from its `ListHandoff`, a copy read again here) their pages go back
                // while they are added.
                var rules = fresh[name]?.take()
                if rules == nil { rules = try lists[name]?.load() }
                if rules != nil { builder.add(taking: rules.take()!, entry: DomainLists.EntryIndex(UInt32(index))) }
            } catch {
                unreadable[name] = error.description
            }
            if let shared {
                entryRules[shared] = .union(entryRules[shared], lists[name] ?? .empty)
            } else {
                entries.append(EntryID(name))
                entryRules.append(lists[name] ?? .empty)
            }
        }
        for set in catalog.allowSets { builder.allowAll(set.rules) }
        // A list URL's host is allowed as that one name: a list fetched from example.net must not
        // open a blocked news.example.net below it (SPEC §1 allows the host the list comes from).
        for host in inputs.listHosts {
            if let name = try? DomainName(host) { builder.allow(name, scope: .exactName) }
        }
        // Consumed, not copied: the build hands the builder's scratch back in steps only when it
        // holds the one copy (`MatcherBuilder.soleCopy`).
        let matcher = (consume builder).build()
        return (ListPart(matcher: matcher, entries: entries, entryRules: entryRules, inputs: inputs), unreadable)
    }
}

/// What a matcher is built from besides the catalog; equal inputs give an equal matcher, so the
/// engine rebuilds only when these change (so a matcher rebuild stays off the path of a rule change).
package struct MatcherInputs: Equatable, Sendable {
    /// Fetched lists in force, by name (sorted); their rules change only with `listGeneration`.
    package var listNames: [String] = []
    package var listGeneration = 0
    package var customDomains: [EntryID] = []
    package var extraAllowed: [String] = []
    /// Hosts of the list URLs, allowed by exact name only.
    package var listHosts: [String] = []

    package init(listNames: [String] = [], listGeneration: Int = 0, customDomains: [EntryID] = [], extraAllowed: [String] = [],
                 listHosts: [String] = []) {
        self.listNames = listNames
        self.listGeneration = listGeneration
        self.customDomains = customDomains
        self.extraAllowed = extraAllowed
        self.listHosts = listHosts
    }

    /// What the lists part is built from (`ListPart`); the rest builds the custom part.
    package struct Lists: Equatable, Sendable {
        package var listNames: [String]
        package var listGeneration: Int
        package var listHosts: [String]
    }

    package var lists: Lists {
        get { Lists(listNames: listNames, listGeneration: listGeneration, listHosts: listHosts) }
        set {
            listNames = newValue.listNames
            listGeneration = newValue.listGeneration
            listHosts = newValue.listHosts
        }
    }

    /// Whether the custom part (custom domains, allowed hosts) differs from `other`'s.
    package func customDiffers(from other: MatcherInputs) -> Bool {
        customDomains != other.customDomains || extraAllowed != other.extraAllowed
    }
}

/// Everything the DNS path needs to answer one query, immutable once built (ARCHITECTURE "data
/// flows one way"). The engine publishes a new one through ``EnforcementBox`` after every state
/// change, at the snapshot's `validUntil` and `refreshAt`; a query holds one instance from start to
/// end. The DNS answer does not depend on those republishes: the snapshot carries the timeline.
public final class Enforcement: Sendable {
    public let tables: MatcherTables
    public let snapshot: EnforcementSnapshot
    /// Each profile's entry states the snapshot was built from (index = entry index), for consumers
    /// that need whole entries rather than one name: hosts mode, `doctor`, logs.
    public let states: [ProfileState]
    public let router: ClientRouter
    /// Profile index → name; index 0 is the default profile.
    public let profileNames: [String]
    /// The trusted clock as of the build, so the DNS side can read "now" from the boot clock alone
    /// (`now(bootNanoseconds:)`) without asking the engine.
    public let clock: TrustedClock
    /// Set by the first query that finds the snapshot due for a rebuild, so the engine is woken once
    /// per snapshot, not once per query.
    let rebuildRequested = Synchronization.Atomic<Bool>(false)

    package init(tables: MatcherTables, snapshot: EnforcementSnapshot, states: [ProfileState], router: ClientRouter,
         profileNames: [String], clock: TrustedClock) {
        self.tables = tables
        self.snapshot = snapshot
        self.states = states
        self.router = router
        self.profileNames = profileNames
        self.clock = clock
    }

    /// An enforcement that blocks nothing, in force until the engine has loaded its state.
    public static func empty(clock: TrustedClock) -> Enforcement {
        Enforcement(
            tables: .empty(),
            snapshot: EnforcementSnapshot(entrySets: [[]], entries: [], profiles: [], builtAt: clock.now), states: [],
            router: ClientRouter(networks: []), profileNames: ["default"], clock: clock)
    }

    public var matcher: LayeredMatcher { tables.matcher }

    /// Whether this query is the first to find the snapshot due for a rebuild (its refresh passed:
    /// the engine's timer is late by hours, or the horizon is near, where managed names fail closed).
    /// One comparison on the hot path; the atomic exchange only once the refresh is due.
    public func claimRebuild(at now: Instant) -> Bool {
        snapshot.needsRebuild(at: now) && !rebuildRequested.exchange(true, ordering: .relaxed)
    }

    /// The trusted time at a `CLOCK_BOOTTIME` reading (SPEC §11); never earlier than the build.
    @inlinable public func now(bootNanoseconds: UInt64) -> Instant { clock.instant(atBootNanoseconds: bootNanoseconds) }

    /// The trusted time now, from one `CLOCK_BOOTTIME` reading: what the DNS side passes to `decide`.
    public func now() -> Instant { clock.instant(atBootNanoseconds: BootClock.nanoseconds()) }

    /// Whether a strict curfew blocks every unlisted name of `profile` at `now`.
    public func isStrictCurfew(profile: Int, now: Instant) -> Bool { snapshot.isStrictCurfew(profile: profile, now: now) }

    /// The entries blocking for `profile` at `now` (blocked or in curfew), from the snapshot's timelines.
    public func blockingEntries(profile: Int, at now: Instant) -> [EntryID] {
        tables.entries.indices.compactMap { i in
            snapshot.kind(profile: profile, entry: i, now: now).isBlocking ? tables.entries[i] : nil
        }
    }

    /// The entry ids of a matcher set, for urge recording and logs (allocates: not for every query).
    public func entries(ofSet set: UInt32) -> [EntryID] {
        guard Int(set) < tables.entrySets.count else { return [] }
        return tables.entrySets[Int(set)].compactMap { Int($0) < tables.entries.count ? tables.entries[Int($0)] : nil }
    }
}

/// The decision for one query (SPEC §9).
public struct EnforcementDecision: Hashable, Sendable {
    public var blocked: Bool
    /// The name belongs to an entry of the client's profile: count urges, cap TTLs.
    public var managed: Bool
    /// The longest TTL an answer may carry; `Decision.uncapped` (UInt32.max) when no cap applies.
    public var ttlCap: UInt32
    /// The matcher's entry set of the name (0 = no entry); pass it to `recordUrge`.
    public var entrySet: UInt32
    /// The client's profile index; pass it to `recordUrge`.
    public var profile: Int
    /// False when the client's profile could not be told (a device's new address whose MAC the
    /// kernel does not know yet) and the strictest profile that could apply answered: the query
    /// belongs to no profile for certain, so no urge is counted against one.
    public var attributed: Bool

    @inlinable public init(blocked: Bool, managed: Bool, ttlCap: UInt32, entrySet: UInt32, profile: Int, attributed: Bool = true) {
        self.blocked = blocked
        self.managed = managed
        self.ttlCap = ttlCap
        self.entrySet = entrySet
        self.profile = profile
        self.attributed = attributed
    }
}

/// The hot-path question: "is this name blocked for this client now, and for how long" (SPEC §9).
///
/// Order: the always-allow list first (allow beats block, SPEC §1, even in a strict curfew), then
/// the client's profile by MAC or longest prefix, then the snapshot cell of that profile × entry set.
/// A device whose MAC is not known yet (`ClientRoute.unresolved`) is answered by the strictest of
/// the profiles it could be in (SPEC §11 "New addresses": never open).
/// No allocation: the matcher walks the wire name on the stack, the router and snapshot index arrays.
extension Enforcement {
    /// - Parameter wire: the question name in DNS wire form (RFC 1035 §3.1), any case.
    @inlinable
    public func decide(wire: UnsafeRawBufferPointer, client: ClientIP, now: Instant) -> EnforcementDecision {
        let match = matcher.match(wire: wire)
        let route = router.route(for: client)
        let set = match.entrySet.rawValue
        if match.isAllowed {
            return EnforcementDecision(blocked: false, managed: false, ttlCap: Decision.uncapped, entrySet: set, profile: route.profile,
                                       attributed: route == .profile(route.profile))
        }
        switch route {
        case .profile(let profile):
            let d = snapshot.decide(profile: profile, set: set, now: now)
            return EnforcementDecision(blocked: d.blocked, managed: d.managed, ttlCap: d.ttlCap, entrySet: set, profile: profile)
        case .unresolved(let own):
            return strictestDecision(self, set: set, own: own, now: now)
        }
    }
}

/// The strictest answer over `own` (the profile the address gives) and every profile that names a
/// MAC: blocked if any blocks, managed if any manages, and the shortest TTL cap of them, so the
/// answer is renewed as soon as any candidate's would change.
@usableFromInline
func strictestDecision(_ enforcement: Enforcement, set: UInt32, own: Int, now: Instant) -> EnforcementDecision {
    let first = enforcement.snapshot.decide(profile: own, set: set, now: now)
    var result = EnforcementDecision(blocked: first.blocked, managed: first.managed, ttlCap: first.ttlCap, entrySet: set,
                                     profile: own, attributed: false)
    let candidates = enforcement.router.macProfileIndices
    var i = 0
    while i < candidates.count {
        let p = candidates[i]
        i += 1
        if p == own { continue }
        let d = enforcement.snapshot.decide(profile: p, set: set, now: now)
        if d.blocked, !result.blocked {
            result.blocked = true
            result.profile = p
        }
        result.managed = result.managed || d.managed
        result.ttlCap = min(result.ttlCap, d.ttlCap)
    }
    if result.blocked { result.ttlCap = min(result.ttlCap, Decision.blockedTTLCap) }
    return result
}

/// Holds the enforcement in force and swaps it whole: the lock
/// is held only to copy or replace one reference, and the old instance is released outside it.
public final class EnforcementBox: Sendable {
    private let current: NIOLockedValueBox<Enforcement>

    public init(_ enforcement: Enforcement) { current = NIOLockedValueBox(enforcement) }

    /// The enforcement in force; hold it for the whole of one query.
    public var enforcement: Enforcement { current.withLockedValue { $0 } }

    /// The previous enforcement goes to the releaser thread (`Retirement`), which frees it once
    /// no query holds it: dropped here it was freed on the engine, or on an event loop when a
    /// query still held it, a 30 MB matcher freed at once (SPEC §9).
    package func publish(_ enforcement: Enforcement) {
        let previous = current.withLockedValue { held -> Enforcement in
            let previous = held
            held = enforcement
            return previous
        }
        if previous !== enforcement { Retirement.shared.retire(previous) }
    }
}
