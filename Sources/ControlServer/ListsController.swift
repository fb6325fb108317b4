import ControlAPI
import DomainLists
import Enforcement
import Engine
import Foundation
import ListFetch
import Logging
import ScrollOffCore
import ServiceKit
import Store

/// The downloaded lists as the control API and the refresh timer see them: add, refresh, remove,
/// report. Which lists the household has is kept in the state (`ListRegistry`, the engine's
/// `ListSource`s), so every helper of a shared store has the same lists; each helper downloads,
/// validates and keeps its own copy with its record (the ListStore's files). A list another
/// helper added is fetched here by the refresh service within a pass of the store's notification,
/// and one removed there loses its copy here; a source added through another helper is read with
/// a member's rights under this helper's own `[lists]` rules (`ListSourceRules.access(forSourceAddedThrough:by:)`).
/// The lists of a helper's files from before are carried into the state once (`carryIn`).
///
/// After every change it tells its observers (the DNS snapshot builder: new copies to load, list
/// hosts to allow) and wakes the refresh service, which then recomputes when to refresh next.
///
/// Two kinds of source share one store: those a person added with `scrolloff lists add` and those
/// the configuration file names (`setConfiguredSources`, at start and at every reload). They merge
/// by name: a file source is fetched and refreshed exactly like an added one, and where both use
/// one name the file's URL wins, once the rules allow it. The file passes the same checks as the
/// CLI (SPEC §1, §3): a new or changed source's host is checked as `lists add` checks it
/// (`checkConfiguredHosts`, which refuses the whole reload), and giving a stored list another URL,
/// which replaces its copy and so opens every name only the old copy listed, is asked as
/// `lists rm` asks (`checkRemoval`); while a rule holds the list the stored URL stays and the new
/// one is held back, applied when the lock ends or at a later reload. `lists rm` refuses a file
/// source (the file would bring it back at the next reload); a source taken out of the file is
/// not deleted by the reload but becomes an ordinary list that `lists rm` can remove.
///
/// A refresh may add names to a list a rule holds but never drop them (SPEC §3, "Enforcement at
/// every instant"): before each refresh the rules are asked (`ListGuard.holdOf`), and while one
/// holds the list the names the new copy drops are kept in `<name>.held`, in force with the copy,
/// until the refresh service finds the lock over (`releaseEndedHolds`) and lets them go. Those
/// names are the household's, not this helper's (`followHeld`): shared through the state at once,
/// and the names another helper's refresh held are written into this helper's `<name>.held` too,
/// so a helper whose copy never had them blocks them as well; they are let go through the state,
/// decided on its latest state, before the file here.
public actor ListsController {
    public nonisolated let store: ListStore
    /// The rules of copies the store's validator accepted, until `HelperControl` puts them in force
    /// (`HelperEngine.parseLists`): one parse per download.
    public nonisolated let parsedCopies: ParsedCopies
    /// When lists are refreshed; the configuration's period can change it at a reload.
    public private(set) var plan: RefreshPlan
    /// Sources the configuration file names, by name, and the file they come from. A name whose
    /// new URL is held back keeps its stored URL here until the lock ends.
    var configured: [ListName: String] = [:]
    /// File URLs waiting while a rule holds their list (SPEC §3), by list name.
    private var heldURLs: [ListName: HeldURL] = [:]
    private var configurationFile = "the configuration file"
    /// Signalled when a list is added, updated or removed by a person.
    public nonisolated let changes = ChangeSignal()
    /// Signalled after every list refresh (the timer's or `scrolloff lists update`), so what is
    /// refreshed with the lists follows them: the firewall's DoH endpoint addresses (SPEC §9b).
    /// A signal, not a call: the refresh never waits for those lookups.
    public nonisolated let refreshed = ChangeSignal()
    private let clock: @Sendable () -> Instant
    private let logger: Logger
    private var observers: [@Sendable (ListsSnapshot) async -> Void] = []
    /// Snapshots taken so far (`ListsSnapshot.sequence`).
    private var snapshots = 0
    /// Names being added right now, so two adds of one name cannot race.
    var adding: [ListName: String] = [:]
    /// Names of copies the household's bound admitted that are not in force yet, by list, so two
    /// downloads at once cannot both pass it (`ListBoundAdmission.swift`).
    var admitted: [ListName: Int] = [:]
    /// How much every list together may hold: `[lists] max_names`, `max_lists` (`setBound`).
    var bound: ListBound
    /// The rules' say on list changes (`HelperControl` wires the engine in); nil allows everything.
    private var guardrail: ListGuard?
    /// Who may add which sources: `[lists] member_file_folders`, `allow_private_hosts`.
    private var sourceRules: ListSourceRules
    /// Root and this user are administrators of the lists (the helper's own user under `make run`).
    private let helperUID = geteuid()
    /// The household's lists kept in the state (from the guard); nil: this helper's files alone.
    private var registry: ListRegistry?
    /// The household's lists as last read, by name.
    private var registered: [ListName: ListSource] = [:]
    /// Sources a reload took out of the configuration file: each becomes an ordinary list, the
    /// household's (carried into the state at the next pass), rather than losing its copy.
    private var formerlyConfigured: Set<ListName> = []
    /// What the configuration file's sources are recorded as added by: root, who writes the file.
    static let configurationAdder = SourceAdder(uid: 0, gid: 0)
    /// A held file changed since the last publish (the household's names written here).
    private var heldChanged = false

    public init(
        stateDirectory: String, configuration: ListsConfiguration = ListsConfiguration(),
        clock: @escaping @Sendable () -> Instant, logger: Logger
    ) {
        let parsedCopies = ParsedCopies()
        self.parsedCopies = parsedCopies
        store = ListStore(
            stateDirectory: stateDirectory, fetcher: ListFetcher(policy: configuration.fetchPolicy),
            validator: DomainListValidator.make(budget: configuration.badLineBudget, keepingIn: parsedCopies),
            dropper: DomainListValidator.dropper(budget: configuration.badLineBudget, reading: parsedCopies), clock: clock
        )
        plan = configuration.refreshPlan
        sourceRules = configuration.sourceRules
        bound = configuration.bound
        self.clock = clock
        self.logger = logger
    }

    /// Sets the checks asked before a list is added or removed.
    public func setGuard(_ guardrail: ListGuard) async {
        self.guardrail = guardrail
        registry = guardrail.registry
        await readRegistry()
    }

    /// Reads the household's lists again (`registered`).
    private func readRegistry() async {
        guard let registry else { return }
        var next: [ListName: ListSource] = [:]
        for source in await registry.sources() {
            if let name = try? ListName(source.name) { next[name] = source }
        }
        registered = next
    }

    /// Whether this folder's lists are in the state already: until they are, a list the state does
    /// not know is this helper's own (from before), not one another helper removed.
    private var carriedIn: Bool {
        guard let registry else { return false }
        return store.carriedInto() == registry.location
    }

    /// Carries this helper's lists from before (their records in the lists folder) into the state,
    /// once per store, losing none: a list the state has already (the same URL) stays the state's
    /// (a row of the same name that names no helper, from `store copy`, is claimed as this helper's),
    /// one whose name the state gives another URL (another helper had a list of that name) is
    /// carried in under a free name (`news-2`), and the configuration file's sources stay the
    /// file's. Tried again at every pass until every one is in the state.
    private func carryIn() async {
        guard let registry, !carriedIn else { return }
        // A row of the same name and URL that names no helper is claimed (`carryInListSources`).
        let own = await store.allMetadata().filter { meta in
            !meta.url.isEmpty && configured[meta.name] == nil && adding[meta.name] == nil
                && (registered[meta.name]?.url != meta.url || registered[meta.name]?.addedOn.isEmpty == true && !registry.node.isEmpty)
        }
        var taken = Set(registered.keys).union(own.map(\.name)).union(configured.keys)
        var sources: [ListSource] = []
        for meta in own {
            if let same = registered.values.first(where: { $0.url == meta.url }), same.name != meta.name.rawValue {
                logger.notice("this helper's list is the household's under another name; its copy here gives way to the household's",
                              metadata: ["list.name": "\(meta.name)", "list.household_name": "\(same.name)"])
                continue
            }
            var name = meta.name
            if let other = registered[meta.name], other.url != meta.url {
                guard let free = try? freeName(base: meta.name.rawValue, taken: taken) else { continue }
                name = free
                taken.insert(free)
                logger.warning("the household has another list of this name, so this helper's list is carried in under a new name; rules that name the old name mean the household's list",
                               metadata: ["list.name": "\(meta.name)", "list.url": "\(meta.url)", "list.new_name": "\(free)",
                                          "list.household_url": "\(other.url)"])
            }
            sources.append(ListSource(name: name.rawValue, url: meta.url, addedByUID: meta.addedBy?.uid, addedByGID: meta.addedBy?.gid,
                                      added: meta.lastChanged ?? meta.lastAttempt ?? clock()))
        }
        do throws(ControlFailure) {
            if !sources.isEmpty { try await registry.carryIn(sources) }
        } catch {
            logger.warning("this helper's lists could not be carried into the household's state yet; they stay in force here and it is tried again at the next pass",
                           metadata: ["error": "\(error.error.message)"])
            return
        }
        await readRegistry()
        // Another helper may have taken a name or URL between the read and the commit: what is not
        // in the state yet is carried in at the next pass, under a name free then.
        let household = Set(registered.values.map(\.url))
        guard sources.allSatisfy({ household.contains($0.url) }) else { return }
        do throws(ListFetchError) { try await store.markCarried(into: registry.location) } catch {
            // Carried in all the same: the next pass finds them in the state and writes the mark again.
            logger.warning("could not note that this helper's lists are in the household's state: \(error.description)")
        }
        if !sources.isEmpty {
            logger.notice("this helper's lists are now the household's", metadata: ["list.count": "\(sources.count)", "store.location": "\(registry.location)"])
        }
    }

    /// Follows the household's lists: a copy of a list the state no longer has (another helper
    /// removed it) is deleted here. Lists it has that are not here yet are fetched by
    /// `refreshDueLists`. Returns whether a copy was removed.
    private func followRegistry() async -> Bool {
        guard registry != nil else { return false }
        await carryIn()
        await readRegistry()
        guard carriedIn else { return false }
        var removed = false
        let unknown = await store.allMetadata().filter { registered[$0.name] == nil && configured[$0.name] == nil && adding[$0.name] == nil }
        // A source the file no longer names stays, as the household's list.
        let released = unknown.filter { formerlyConfigured.contains($0.name) && !$0.url.isEmpty }
        if let registry, !released.isEmpty {
            let sources = released.map { ListSource(name: $0.name.rawValue, url: $0.url, addedByUID: 0, addedByGID: 0, added: clock()) }
            do throws(ControlFailure) {
                try await registry.carryIn(sources)
                formerlyConfigured.subtract(released.map(\.name))
                await readRegistry()
            } catch {
                logger.warning("a source taken out of the configuration file could not be made the household's yet; tried again at the next pass",
                               metadata: ["error": "\(error.error.message)"])
            }
        }
        for meta in unknown where registered[meta.name] == nil && !formerlyConfigured.contains(meta.name) {
            do {
                try await store.remove(meta.name)
                removed = true
                logger.info("list removed through another helper of the household; its copy here is deleted", metadata: ["list.name": "\(meta.name)"])
            } catch {
                logger.warning("the copy of a list the household removed could not be deleted: \(error.description)", metadata: ["list.name": "\(meta.name)"])
            }
        }
        return removed
    }

    /// The household's lists this helper has not fetched, or whose URL changed, and is not told
    /// otherwise by its configuration file.
    private func registeredToFetch(stored: [ListName: String]) -> [ListSource] {
        // Until this helper's own lists are carried in, a copy of another URL under a household
        // name is its own list from before, not to be replaced before it is carried in.
        let carried = carriedIn
        return registered.sorted { $0.key < $1.key }.compactMap { name, source in
            configured[name] == nil && adding[name] == nil && stored[name] != source.url && (carried || stored[name] == nil) ? source : nil
        }
    }

    /// Puts `[lists] member_file_folders` and `allow_private_hosts` in force (start and reload);
    /// the next refresh of every member's source is checked against them.
    public func setSourceRules(_ rules: ListSourceRules) { sourceRules = rules }

    /// Whose rights a stored source is fetched with: the configuration file's are root's, an added
    /// one's its adder's, whoever asks for the refresh (root's `lists update` of a member's
    /// source checks the member's rights again).
    private func sourceAccess(for name: ListName, url: String, addedBy: SourceAdder?) -> (SourceAccess, SourceAdder) {
        let adder = configured[name] == url ? Self.configurationAdder : (addedBy ?? .unknown)
        // Another helper's list gets no more here than this helper's rules give a member; on a
        // shared store so does a row that names no helper (copied by `store copy` from a helper
        // alone), until the helper holding its record claims it at its carry-in.
        if configured[name] != url, let registry, !registry.node.isEmpty, let shared = registered[name], shared.url == url,
           shared.addedOn != registry.node {
            let through = shared.addedOn.isEmpty ? "(none named: a state copied by `scrolloff-dns store copy`)" : shared.addedOn
            return (sourceRules.access(forSourceAddedThrough: through, by: adder), adder)
        }
        return (sourceRules.access(for: adder, helperUID: helperUID), adder)
    }

    /// Checks the configuration file's sources without changing anything: names a list can have,
    /// URLs the fetcher takes, no name or URL twice. The message names the source.
    public static func validate(_ sources: [ConfiguredListSource]) throws(ControlFailure) {
        var names = Set<ListName>()
        var urls = Set<String>()
        for source in sources {
            let name: ListName
            do { name = try ListName(source.name) } catch { throw .invalidArgument("list source “\(source.name)”: \(error.description)") }
            _ = try ListSourceNaming.validate(source.url)
            guard names.insert(name).inserted else {
                throw .invalidArgument("list source “\(source.name)” is named twice; give each [[lists.source]] its own name.")
            }
            guard urls.insert(source.url).inserted else {
                throw .invalidArgument("list source “\(source.name)”: \(source.url) is already used by another source.")
            }
        }
    }

    /// Refuses a file whose new or changed source would be fetched from a host an entry blocks:
    /// the host becomes always-allowed as soon as the source is in force, before any download
    /// (SPEC §1), so it is checked as `lists add` checks it, before anything of the file applies.
    /// Sources already in force with the same URL are not asked again.
    public func checkConfiguredHosts(_ sources: [ConfiguredListSource]) async throws(ConfigurationRejected) {
        guard let guardrail else { return }
        let stored = await storedURLs()
        for (index, source) in sources.enumerated() {
            guard let name = try? ListName(source.name), stored[name] != source.url, configured[name] != source.url,
                  let host = (try? ListSourceNaming.validate(source.url))?.fetchedHost
            else { continue }
            do { try await guardrail.checkSourceHost(host) } catch {
                throw ConfigurationRejected(
                    "lists.source[\(index + 1)].url is \"\(source.url)\": \(error.error.message) Nothing of the file was applied.")
            }
        }
    }

    /// What `setConfiguredSources` did.
    public struct ConfiguredSourcesOutcome: Sendable, Equatable {
        /// Whether the sources in force changed (a source added, taken out or given a new URL).
        public var changed = false
        /// New URLs kept back while a rule holds their list, each with when the lock ends.
        public var heldBack: [String] = []
    }

    /// Puts the configuration file's list sources and refresh period in force (at start and at
    /// every reload). Sources new to the store, or whose URL changed, are fetched by the refresh
    /// service right away; nothing here waits for a download. Call `validate` and
    /// `checkConfiguredHosts` first.
    ///
    /// A stored list given another URL loses its copy at the next fetch, which opens every name
    /// only the old copy listed; so the rules are asked as for `lists rm` (SPEC §3, §11), and while
    /// one refuses, the stored URL stays and the new one waits, reported with the lock's end.
    @discardableResult
    public func setConfiguredSources(
        _ sources: [ConfiguredListSource], refreshPeriod: Span, definedIn file: String
    ) async -> ConfiguredSourcesOutcome {
        var outcome = ConfiguredSourcesOutcome()
        let stored = await storedURLs()
        var next: [ListName: String] = [:]
        var held: [ListName: HeldURL] = [:]
        for (index, source) in sources.enumerated() {
            guard let name = try? ListName(source.name) else { continue }
            next[name] = source.url
            guard let old = stored[name], old != source.url, let guardrail else { continue }
            do { try await guardrail.checkRemoval(name) } catch {
                next[name] = old
                let waiting = HeldURL(url: source.url, key: "lists.source[\(index + 1)].url",
                                      until: error.error.opensAt.map(Instant.init(date:)))
                held[name] = waiting
                outcome.heldBack.append(waiting.report(name: name, old: old, reason: error.error.message))
            }
        }
        let heldChanged = held != heldURLs
        heldURLs = held
        let periodChanged = plan.period != refreshPeriod
        outcome.changed = next != configured
        guard outcome.changed || periodChanged || file != configurationFile || heldChanged else { return outcome }
        formerlyConfigured.formUnion(configured.keys.filter { next[$0] == nil })
        formerlyConfigured.subtract(next.keys)
        configured = next
        configurationFile = file
        if periodChanged { plan.period = refreshPeriod }
        await publish()
        // Also wakes the refresh service to plan for a held URL's lock end.
        changes.notify()
        return outcome
    }

    private func storedURLs() async -> [ListName: String] {
        Dictionary(await store.allMetadata().map { ($0.name, $0.url) }, uniquingKeysWith: { first, _ in first })
    }

    /// Puts in force the held URLs whose lock has ended, asking the rules again (a newer rule may
    /// hold the list by now, or an entry may now cover the new host). Called by the refresh timer,
    /// which then fetches them. Returns whether any was applied.
    private func releaseHeldURLs() async -> Bool {
        let now = clock()
        var released = false
        for (name, waiting) in heldURLs.sorted(by: { $0.key < $1.key }) {
            guard let until = waiting.until, until <= now else { continue }
            do throws(ControlFailure) {
                if let guardrail {
                    try await guardrail.checkRemoval(name)
                    if let host = (try? ListSourceNaming.validate(waiting.url))?.fetchedHost { try await guardrail.checkSourceHost(host) }
                }
            } catch {
                // Still held: wait for the new lock's end, never sooner than a minute (no spinning
                // on a clock that disagrees), or for a reload when waiting will not help.
                let next = error.error.opensAt.map(Instant.init(date:)).map { max($0, now + .seconds(60)) }
                if heldURLs[name] == waiting { heldURLs[name]?.until = next }
                logger.notice("list URL from the configuration still held back: \(error.error.message)", metadata: ["list.name": "\(name)"])
                continue
            }
            // A reload during the awaits above settled this name afresh: its word stands.
            guard heldURLs[name] == waiting else { continue }
            heldURLs[name] = nil
            configured[name] = waiting.url
            released = true
            logger.notice("held-back list URL applied now that its lock has ended",
                          metadata: ["list.name": "\(name)", "list.url": "\(waiting.url)"])
        }
        return released
    }

    /// Whether `name` comes from the configuration file.
    public func isConfigured(_ name: String) -> Bool {
        (try? ListName(name)).map { configured[$0] != nil } ?? false
    }

    /// Calls `observer` after every change with the new snapshot.
    public func onChange(_ observer: @escaping @Sendable (ListsSnapshot) async -> Void) {
        observers.append(observer)
    }

    public func snapshot() async -> ListsSnapshot {
        let all = await store.allMetadata()
        snapshots += 1
        let sequence = snapshots
        var lists = all.map { meta in
            ListsSnapshot.ActiveList(
                name: meta.name.rawValue, url: meta.url,
                copyPath: meta.hasCopy ? store.copyPath(for: meta.name) : nil, entryCount: meta.entryCount,
                // Named whether or not names are held now: a refresh replaces the copy at the same
                // path, after writing the names it drops under a lock to this file, and the copy in
                // force is read again from its path while the refresh's matcher is built (a rebuild
                // in place, hosts mode) — it must read those held names too (`ListCopy.rules`).
                heldPath: meta.hasCopy ? store.heldPath(for: meta.name) : nil
            )
        }
        // A file source not fetched yet is already an entry (blocking it blocks nothing until it
        // arrives), and its host is already allowed, so no rule can stop its first download.
        let stored = Set(all.map(\.name))
        for (name, url) in configured.sorted(by: { $0.key < $1.key }) where !stored.contains(name) {
            lists.append(ListsSnapshot.ActiveList(name: name.rawValue, url: url, copyPath: nil, entryCount: nil))
        }
        // So is a list another helper added, until its copy arrives here.
        let waiting = registered.sorted { $0.key < $1.key }.filter { !stored.contains($0.key) && configured[$0.key] == nil }
        for (name, source) in waiting {
            lists.append(ListsSnapshot.ActiveList(name: name.rawValue, url: source.url, copyPath: nil, entryCount: nil))
        }
        // libcurl's own URL parser (`ListSourceURL`) names the host, so the allowed host is the one fetched.
        let hosts = (all.map(\.url) + adding.values + configured.values + waiting.map(\.value.url)).compactMap(ListFetcher.host(of:))
        return ListsSnapshot(lists: lists, allowedHosts: Array(Set(hosts)).sorted(), sequence: sequence)
    }

    /// Hosts of every configured list URL, for the always-allow policy (SPEC §1).
    public func allowedHosts() async -> [String] { await snapshot().allowedHosts }

    /// Sends the current snapshot to every observer.
    public func publish() async {
        heldChanged = false
        let current = await snapshot()
        for observer in observers { await observer(current) }
    }

    // MARK: reading

    public func listsResponse() async throws(ControlFailure) -> ListsResponse {
        let now = clock()
        await readRegistry()
        var all = await allMetadata()
        // A list of the household not tried here yet is shown as never fetched.
        let stored = Set(all.map(\.name))
        for (name, source) in registered.sorted(by: { $0.key < $1.key }) where !stored.contains(name) && configured[name] == nil {
            all.append(ListMetadata(name: name, url: source.url))
        }
        return ListsResponse(now: now.date, lists: all.map { info(for: $0, now: now) })
    }

    private func allMetadata() async -> [ListMetadata] {
        await store.allMetadata()
    }

    func info(for meta: ListMetadata, now: Instant) -> ListInfo {
        let state: String
        switch plan.health(of: meta, now: now) {
        case .neverFetched: state = ListState.neverFetched
        case .fresh: state = ListState.fresh
        case .failing: state = ListState.failing
        case .stale: state = ListState.stale
        }
        return ListInfo(
            state: state, name: meta.name.rawValue, url: meta.url, servingCopy: meta.hasCopy,
            entryCount: meta.entryCount, sizeBytes: meta.sizeBytes, badLineCount: meta.badLineCount,
            badLines: meta.badLines.map { BadLineInfo(lineNumber: $0.lineNumber, text: $0.text, reason: $0.reason) },
            lastSuccess: meta.lastSuccess?.date, lastAttempt: meta.lastAttempt?.date, lastChanged: meta.lastChanged?.date,
            nextRefresh: (plan.nextRefresh(for: meta.name, history: meta.history) ?? now).date,
            lastError: meta.lastError, lastErrorCode: meta.lastErrorCode, consecutiveFailures: meta.consecutiveFailures,
            definedIn: configured[meta.name] == nil ? nil : configurationFile,
            held: meta.held.map { HeldNamesInfo(count: $0.count, until: $0.until?.date, reason: $0.reason, since: $0.since.date) }
        )
    }

    // MARK: changing

    /// Adds a list and downloads it once. A list whose first download fails is not kept: the
    /// person sees why at once and can fix the URL, instead of a dead entry lingering.
    ///
    /// `caller` is who asks (nil: the helper itself, as an administrator). A group member may add
    /// only what `ListSourceRules` lets them read and reach; the refusal names paths,
    /// addresses and ids, never a line of what was refused.
    public func add(_ request: AddListRequest, caller: CallerIdentity? = nil,
                    progress: ProgressHandler? = nil) async throws(ControlFailure) -> AddListResponse {
        let url = request.url.trimmingCharacters(in: .whitespaces)
        let source = try ListSourceNaming.validate(url)
        let adder = caller.map { SourceAdder(uid: $0.uid, gid: $0.gid) } ?? SourceAdder(uid: helperUID, gid: getegid())
        let access = sourceRules.access(for: adder, helperUID: helperUID)
        // Refused before anything is published or opened: a member's file outside the folders
        // named for members is not even looked at.
        if source.scheme == "file", let refusal = access.refusal(ofFile: source.path) {
            logger.notice("list source refused", metadata: ["list.url": "\(url)", "client.uid": "\(adder.uid)", "error": "source-refused"])
            throw .forbidden("\(url) was not added: \(refusal)")
        }
        // Checked before anything is published: the host becomes always-allowed (SPEC §1).
        if let host = source.fetchedHost, let guardrail { try await guardrail.checkSourceHost(host) }
        await readRegistry()
        let existing = await allMetadata() + registered.map { ListMetadata(name: $0.key, url: $0.value.url) }
        if let same = existing.first(where: { $0.url == url }) {
            throw ControlFailure(
                status: .conflict, code: ControlErrorCode.listExists,
                message: "That URL is already in use as list '\(same.name)'. Refresh it with `scrolloff lists update \(same.name)`."
            )
        }
        let name: ListName
        if let requested = request.name {
            do {
                name = try ListName(requested)
            } catch {
                throw .invalidArgument(error.description)
            }
            if existing.contains(where: { $0.name == name }) || adding[name] != nil {
                throw ControlFailure(
                    status: .conflict, code: ControlErrorCode.listExists,
                    message: "A list named '\(name)' already exists. Pick another --name, or remove it first with `scrolloff lists rm \(name)`."
                )
            }
        } else {
            name = try freeName(base: ListSourceNaming.derivedName(from: source), taken: Set(existing.map(\.name)))
        }
        if let guardrail { try await guardrail.checkName(name) }
        do throws(ListBoundExceeded) {
            try bound.checkNewList(name, existing: Set(existing.map(\.name)).union(configured.keys).union(adding.keys).count)
        } catch { throw .invalidArgument(error.message) }
        adding[name] = url
        defer { adding[name] = nil }
        // Allow the list's host before fetching it, or a blocking policy could stop the download.
        await publish()
        let report = await store.refresh(name, from: url, progress: progress, access: access, addedBy: adder, admit: admission(for: name))
        admitted[name] = nil
        if case .failed(let error) = report.outcome {
            try? await store.remove(name)
            adding[name] = nil
            await publish()
            logger.notice("list not added", metadata: ["list.name": "\(name)", "list.url": "\(url)", "error": "\(error.code)"])
            switch error {
            case .sourceRefused, .addressRefused:
                throw .forbidden("List '\(name)' was not added: \(error.description)")
            case .overBound(_, let reason):
                throw .invalidArgument(reason)
            default:
                throw ControlFailure(
                    status: .unprocessableContent, code: ControlErrorCode.fetchFailed,
                    message: "List '\(name)' was not added: \(error.description(atAdd: true))"
                )
            }
        }
        if let registry {
            // The household's from now on: one commit with its event, heard by the other helpers.
            do throws(ControlFailure) {
                // The bound asked again in the commit: another helper may have added a list since `existing` was read.
                let alone = configured.keys.filter { registered[$0] == nil }.count
                try await registry.add(ListSource(name: name.rawValue, url: url, addedByUID: adder.uid, addedByGID: adder.gid, added: clock()),
                                       bound, alone)
            } catch {
                try? await store.remove(name)
                adding[name] = nil
                await publish()
                logger.notice("list not added: the household's state did not take it", metadata: ["list.name": "\(name)", "error": "\(error.error.message)"])
                throw error
            }
            await readRegistry()
        }
        adding[name] = nil
        logger.info("list added", metadata: ["list.name": "\(name)", "list.url": "\(url)", "list.entries": "\(report.metadata.entryCount ?? 0)"])
        if registry == nil { await guardrail?.changed(true, name, url) }
        await publish()
        changes.notify()
        return AddListResponse(now: clock().date, result: result(of: report))
    }

    private func freeName(base: String, taken: Set<ListName>) throws(ControlFailure) -> ListName {
        for suffix in 1...100 {
            let candidate = suffix == 1 ? base : "\(base)-\(suffix)"
            if let name = try? ListName(candidate), !taken.contains(name), adding[name] == nil { return name }
        }
        throw .invalidArgument("Could not derive a free list name from '\(base)'; give one with --name.")
    }

    /// The lists `name` selects (all of them when nil), with their URLs.
    func sources(named name: String?) async throws(ControlFailure) -> [ListMetadata] {
        let all = await allMetadata()
        guard let name else { return all }
        let wanted: ListName
        do {
            wanted = try ListName(name)
        } catch {
            throw .invalidArgument(error.description)
        }
        guard let found = all.first(where: { $0.name == wanted }) else {
            throw ControlFailure(
                status: .notFound, code: ControlErrorCode.listNotFound,
                message: "There is no list named '\(name)'. `scrolloff lists list` shows the lists you have."
            )
        }
        return [found]
    }

    /// Refreshes the selected lists one after another and reports each outcome. A failure keeps
    /// the copy in force and is recorded for `lists list`.
    public func update(
        name: String?, progress: (@Sendable (ListName, FetchProgress) -> Void)? = nil
    ) async throws(ControlFailure) -> [RefreshResult] {
        _ = await releaseEndedHolds()
        // The household's lists this helper has no copy of yet are fetched too (all, or the one named).
        let pending = await notFetchedHere()
        let selected: [ListMetadata]
        if let name, let wanted = try? ListName(name), let list = pending.first(where: { $0.name == wanted }) {
            selected = [list]
        } else {
            selected = try await sources(named: name) + (name == nil ? pending : [])
        }
        // A refresh's download, parse and matcher build wait for idle CPU (`LowPriorityWork`): the copies in force answer meanwhile.
        return await ListRefreshContext.$isRefresh.withValue(true) { await refreshNow(selected, progress: progress) }
    }

    /// The household's lists this helper has no copy of yet (another helper added them and the
    /// refresh service has not fetched them here), as records to fetch now: a list is the
    /// household's, so `lists update NAME` downloads it rather than answering "no list named".
    /// Fetched with the rights of who added it, as the refresh service would.
    private func notFetchedHere() async -> [ListMetadata] {
        guard registry != nil else { return [] }
        await readRegistry()
        let here = Set(await allMetadata().map(\.name))
        return registered.sorted { $0.key < $1.key }.compactMap { name, shared in
            guard configured[name] == nil, adding[name] == nil, !here.contains(name) else { return nil }
            var pending = ListMetadata(name: name, url: shared.url)
            pending.addedBy = shared.addedByUID.map { SourceAdder(uid: $0, gid: shared.addedByGID ?? $0) }
            return pending
        }
    }

    private func refreshNow(
        _ selected: [ListMetadata], progress: (@Sendable (ListName, FetchProgress) -> Void)?
    ) async -> [RefreshResult] {
        var results: [RefreshResult] = []
        for source in selected {
            guard !source.url.isEmpty else {
                results.append(RefreshResult(
                    outcome: RefreshOutcome.failed, name: source.name.rawValue,
                    error: ControlError(
                        code: source.lastErrorCode ?? "unreadable-record",
                        message: (source.lastError ?? "The list's record cannot be read.")
                            + " Remove it with `scrolloff lists rm \(source.name)` and add it again."
                    ),
                    list: info(for: source, now: clock())
                ))
                continue
            }
            var perList: ProgressHandler?
            if let progress {
                let listName = source.name
                perList = { report in progress(listName, report) }
            }
            let report = await refresh(source.name, from: source.url, addedBy: source.addedBy, progress: perList, trigger: "request")
            results.append(result(of: report))
        }
        await publish()
        changes.notify()
        refreshed.notify()
        return results
    }

    /// Removes a list's copy and metadata, unless a rule that names the list forbids it now.
    /// - Parameter checkedProfiles: the profiles whose rights over the list were checked; the
    ///   household's commit refuses the removal when another profile names the list by then.
    public func remove(_ name: String, checkedProfiles: Set<String>? = nil) async throws(ControlFailure) -> RemoveListResponse {
        await readRegistry()
        let source: ListMetadata
        if let wanted = try? ListName(name), let shared = registered[wanted], !(await allMetadata()).contains(where: { $0.name == wanted }) {
            // The household's, not fetched here (yet, or refused here): removed all the same.
            source = ListMetadata(name: wanted, url: shared.url)
        } else {
            source = try await sources(named: name)[0]
        }
        guard configured[source.name] == nil else {
            throw ControlFailure(
                status: .conflict, code: ControlErrorCode.refused,
                message: "List '\(source.name)' is defined in \(configurationFile); remove it there, reload the helper "
                    + "(systemctl reload scrolloff-dns), then `scrolloff lists rm \(source.name)`."
            )
        }
        // Removing a list opens every name on it, so a rule holding it must allow that (SPEC §3).
        if let guardrail { try await guardrail.checkRemoval(source.name) }
        // Gone for the household first (the rules asked again in that commit); a refusal or an
        // unreachable database leaves the copy here in force.
        var shared = false
        if let registry { shared = try await registry.remove(source.name, checkedProfiles) }
        do {
            try await store.remove(source.name)
        } catch {
            throw .internalError(error.description)
        }
        await readRegistry()
        logger.info("list removed", metadata: ["list.name": "\(source.name)"])
        if !shared { await guardrail?.changed(false, source.name, source.url) }
        await publish()
        changes.notify()
        return RemoveListResponse(removed: source.name.rawValue)
    }

    /// Refreshes every list whose planned instant has come and returns the next planned instant
    /// (nil when there is no list). Used by `ListRefreshService`.
    func refreshDueLists() async -> Instant? {
        var changed = await releaseHeldURLs()
        if await followRegistry() { changed = true }
        if await releaseEndedHolds() { changed = true }
        var fetched = false
        // File sources not in the store yet, or whose URL the file changed, are fetched now.
        let stored = Dictionary(await store.allMetadata().map { ($0.name, $0.url) }, uniquingKeysWith: { first, _ in first })
        // Not a refresh: nothing of a new source is in force yet, and the person who started the
        // helper or reloaded the file waits for it, so its parse and build stay at nice 10.
        var asked = false
        for (name, url) in configured.sorted(by: { $0.key < $1.key }) where stored[name] != url {
            if Task.isCancelled { break }
            _ = await refresh(name, from: url, addedBy: Self.configurationAdder, trigger: "configuration")
            changed = true
            fetched = true
            asked = true
        }
        // So are the household's lists another helper added, with the rights of who added them.
        for source in registeredToFetch(stored: stored) {
            if Task.isCancelled { break }
            guard let name = try? ListName(source.name) else { continue }
            let adder = source.addedByUID.map { SourceAdder(uid: $0, gid: source.addedByGID ?? $0) }
            let report = await refresh(name, from: source.url, addedBy: adder, trigger: "household")
            if case .failed(let error) = report.outcome {
                logger.notice("a list of the household is not fetched here: \(error.description)",
                              metadata: ["list.name": "\(name)", "list.added_through": "\(source.addedOn)"])
            }
            changed = true
            fetched = true
            asked = true
        }
        // A record that could not be read has no URL to fetch; `lists list` shows it with the reason.
        for source in await store.allMetadata() where !source.url.isEmpty && plan.isDue(source.name, history: source.history, now: clock()) {
            if Task.isCancelled { break }
            // A refresh's download, parse and matcher build wait for idle CPU (`LowPriorityWork`): the copy in force answers meanwhile.
            let report = await ListRefreshContext.$isRefresh.withValue(true) {
                await refresh(source.name, from: source.url, addedBy: source.addedBy, trigger: "timer")
            }
            if case .updated = report.outcome { changed = true }
            fetched = true
        }
        // The household's held names another helper's refresh changed (its reload woke this pass).
        await followHeldNames()
        if heldChanged { changed = true }
        if changed { await ListRefreshContext.$isRefresh.withValue(!asked) { await publish() } }
        // Only when something was fetched: this pass also runs when a person adds or removes a list.
        if fetched { refreshed.notify() }
        let all = await store.allMetadata().filter { !$0.url.isEmpty }
        // A list that was never tried plans "now"; that only happens for lists added while offline.
        // Held names are released at their lock's end; a lock with no known end is asked again
        // every 15 min (it may be a focus session or a rule a later command loosens).
        let heldEnds = all.compactMap { meta in meta.held.map { $0.until ?? clock() + .minutes(15) } }
        let lockEnds = heldURLs.values.compactMap(\.until) + heldEnds
        return (all.map { plan.nextRefresh(for: $0.name, history: $0.history) ?? clock() } + lockEnds).min()
    }

    /// One refresh, asking the rules first: while one holds the list, names the new copy drops
    /// stay in force (`<name>.held`) until the lock ends, and the log says so (SPEC §3).
    private func refresh(_ name: ListName, from url: String, addedBy: SourceAdder?, progress: ProgressHandler? = nil,
                         trigger: String) async -> RefreshReport {
        var hold: ListHold?
        if let guardrail, let refusal = await guardrail.holdOf(name) {
            hold = ListHold(until: refusal.error.opensAt.map(Instant.init(date:)), reason: refusal.error.message)
        }
        let (access, adder) = sourceAccess(for: name, url: url, addedBy: addedBy)
        let report = await store.refresh(name, from: url, progress: progress, hold: hold, access: access, addedBy: adder, admit: admission(for: name))
        admitted[name] = nil
        log(report, trigger: trigger)
        if let held = report.metadata.held, case .updated = report.outcome {
            logger.notice(
                "list refresh dropped names a rule holds; \(held.count) stay blocked until \(held.until.map(HelperEngine.logTime) ?? "the rule allows it"): \(held.reason)",
                metadata: ["list.name": "\(name)", "list.held": "\(held.count)"])
        }
        // Names this refresh held are the household's at once; and a first copy here gets the
        // names another helper's refresh held before it is put in force.
        await followHeld(name)
        return report
    }

    /// `followHeld` for every list with a copy here.
    private func followHeldNames() async {
        guard registry != nil else { return }
        for meta in await store.allMetadata() where meta.hasCopy { await followHeld(meta.name) }
    }

    /// Makes this helper's held names of list `name` and the household's one set (SPEC §3: a
    /// refresh never drops names while a rule holds the list, on any helper). Names only this
    /// helper's refresh held are shared first (the household keeps the union, so none is lost);
    /// then, when the household's revision is not the one this copy's held file was brought in
    /// line with, the household's names the copy lacks go into `<name>.held` (`heldChanged`: the
    /// caller publishes). Any failure leaves what is in force here and is tried at the next pass.
    private func followHeld(_ name: ListName) async {
        guard let registry, let meta = try? await store.metadata(for: name), meta.hasCopy else { return }
        var household = await registry.held().first { $0.name == name.rawValue }
        var expected = HeldState(meta)
        if meta.held != nil, meta.heldRevision == nil {
            let own: (rules: [String], state: HeldState)?
            do throws(ListFetchError) { own = try await store.heldRules(name) } catch {
                logger.warning("held list names could not be read to share them: \(error.description)", metadata: ["list.name": "\(name)"])
                return
            }
            guard let own else { return }
            do throws(ControlFailure) { household = try await registry.holdNames(name, own.rules) } catch {
                logger.warning("names held here are not the household's yet; they stay blocked here and are shared at the next pass",
                               metadata: ["list.name": "\(name)", "error": "\(error.error.message)"])
                return
            }
            // No rule holds the list on the household's latest state: they go at the release.
            guard household != nil else { return }
            expected = own.state
        }
        guard let shared = household, shared.count > 0, shared.revision != expected.revision else { return }
        let names: HeldListNames
        do throws(ControlFailure) {
            guard let read = try await registry.heldNames(name), read.summary.count > 0 else { return }
            names = read
        } catch {
            logger.warning("the household's held names could not be read; tried again at the next pass",
                           metadata: ["list.name": "\(name)", "error": "\(error.error.message)"])
            return
        }
        let s = names.summary
        let outcome: HeldAdoption
        do throws(ListFetchError) {
            outcome = try await store.adoptHeld(name, household: names.rules, revision: s.revision, until: s.until, reason: s.reason,
                                                since: s.since, expected: expected)
        } catch {
            logger.warning("the household's held names could not be written here: \(error.description)", metadata: ["list.name": "\(name)"])
            return
        }
        if outcome == .replaced {
            heldChanged = true
            logger.notice("the household's held names of a list are blocked here too",
                          metadata: ["list.name": "\(name)", "list.held": "\(s.count)", "list.held_revision": "\(s.revision)"])
        }
    }

    /// Releases the held names of every list no rule holds any more, at or after its lock's end
    /// (asked again, since a newer rule may hold it by now). Returns whether any was released.
    private func releaseEndedHolds() async -> Bool {
        let now = clock()
        var released = false
        let household = Dictionary((await registry?.held() ?? []).map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        for meta in await store.allMetadata() where meta.held != nil || store.hasHeldNames(meta.name) {
            // Let go by the household since this file was written (another helper found the lock
            // over): asked now, whatever end this record noted.
            let goneThere = meta.heldRevision.map { mine in household[meta.name.rawValue].map { $0.count == 0 && $0.revision > mine } ?? false } ?? false
            if !goneThere, let until = meta.held?.until, until > now { continue }
            if let guardrail, let refusal = await guardrail.holdOf(meta.name) {
                // Still held: wait for the new lock's end, never sooner than a minute.
                let next = refusal.error.opensAt.map(Instant.init(date:)).map { max($0, now + .seconds(60)) }
                try? await store.updateHold(meta.name, until: next, reason: refusal.error.message)
                continue
            }
            if let registry {
                // Let go for the household first, decided on its latest state: a rule this helper
                // has not heard of yet (another helper set it) keeps them held here too.
                do throws(ControlFailure) {
                    if let holding = try await registry.releaseHeld(meta.name) {
                        try? await store.updateHold(meta.name, until: holding.until.map { max($0, now + .seconds(60)) }, reason: holding.reason)
                        continue
                    }
                } catch {
                    logger.warning("held list names stay blocked: the household's state could not be asked whether the lock is over; tried again at the next pass",
                                   metadata: ["list.name": "\(meta.name)", "error": "\(error.error.message)"])
                    continue
                }
            }
            do {
                try await store.releaseHeld(meta.name)
                released = true
                logger.notice("held list names released now that the lock has ended",
                              metadata: ["list.name": "\(meta.name)", "list.held": "\(meta.held?.count ?? 0)"])
            } catch {
                logger.warning("held list names could not be released: \(error.description)", metadata: ["list.name": "\(meta.name)"])
            }
        }
        if released { await publish() }
        return released
    }

    private func log(_ report: RefreshReport, trigger: String) {
        var metadata: Logger.Metadata = ["list.name": "\(report.name)", "list.trigger": "\(trigger)"]
        switch report.outcome {
        case .updated(let entries, let bytes):
            metadata["list.entries"] = "\(entries)"
            metadata["list.bytes"] = "\(bytes)"
            logger.info("list updated", metadata: metadata)
        case .unchanged:
            logger.info("list unchanged", metadata: metadata)
        case .failed(let error):
            metadata["error.code"] = "\(error.code)"
            metadata["list.serving_last_good"] = "\(report.metadata.hasCopy)"
            logger.warning("list refresh failed: \(error.description)", metadata: metadata)
        }
    }

    func result(of report: RefreshReport) -> RefreshResult {
        let list = info(for: report.metadata, now: clock())
        switch report.outcome {
        case .updated:
            return RefreshResult(outcome: RefreshOutcome.updated, name: report.name.rawValue, list: list)
        case .unchanged:
            return RefreshResult(outcome: RefreshOutcome.unchanged, name: report.name.rawValue, list: list)
        case .failed(let error):
            return RefreshResult(
                outcome: RefreshOutcome.failed, name: report.name.rawValue,
                error: ControlError(code: error.code, message: error.description), list: list
            )
        }
    }
}

/// A configuration file URL for a stored list, waiting while a rule holds the list (SPEC §3).
struct HeldURL: Sendable, Equatable {
    var url: String
    /// The file key that names it, `lists.source[N].url`.
    var key: String
    /// When the lock ends; nil when waiting alone will not open it (then a later reload asks again).
    var until: Instant?

    func report(name: ListName, old: String, reason: String) -> String {
        let head = "list \(name): \(key) \"\(url)\" waits"
        let keeps = "it keeps \"\(old)\" until then"
        guard let until else {
            return "\(head) while a rule holds the list (\(reason)); \(keeps), and a later reload applies the new URL once the rule allows it"
        }
        return "\(head) until \(HelperEngine.logTime(until)) while a rule holds the list (\(reason)); "
            + "\(keeps), and the new URL applies by itself then"
    }
}
