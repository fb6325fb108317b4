import DomainLists
import Enforcement
import Foundation
import ListFetch
import Logging
import LowPriority
import ScrollOffCore
import ServiceLifecycle
import Sinkhole
import Store

/// What the engine needs to start.
public struct EngineConfiguration: Sendable {
    /// Where `scrolloff.sqlite` lives (SPEC §12).
    public var stateDirectory: String
    /// The curated catalog (`Catalog.load(folder: "blocklists")`).
    public var catalog: Catalog
    /// Hosts that are always allowed besides the allow lists: the hosts of configured list URLs,
    /// the helper's own names (SPEC §1).
    public var extraAllowedHosts: [String]
    /// The build date; a wall clock earlier than this is not trusted (SPEC §11).
    public var buildDate: Instant
    /// The zone of the default profile on first setup; nil = the system's.
    public var defaultTimeZoneID: String?
    public var defaultPreset: Preset

    public init(stateDirectory: String, catalog: Catalog, extraAllowedHosts: [String] = [], buildDate: Instant,
                defaultTimeZoneID: String? = nil, defaultPreset: Preset = .default) {
        self.stateDirectory = stateDirectory
        self.catalog = catalog
        self.extraAllowedHosts = extraAllowedHosts
        self.buildDate = buildDate
        self.defaultTimeZoneID = defaultTimeZoneID
        self.defaultPreset = defaultPreset
    }

    /// Loads the curated catalog (`blocklists/`), turning a bad file into a start-up error that
    /// names the file and line (ARCHITECTURE principle 5: fatal at start-up).
    public static func loadCatalog(folder: String) throws(EngineError) -> Catalog {
        do { return try Catalog.load(folder: folder) } catch { throw .catalog(error.description) }
    }
}

/// The single owner of state in the helper process (SPEC §3): it holds every profile's
/// rules and credit account, runs every command on the trusted clock (SPEC §11), commits each change
/// with the clock anchor before answering, and publishes the enforcement the DNS path reads.
///
/// Commands run on a copy of the profiles; the copy replaces the held state only after the store
/// has committed, so a refused command or a failed write changes nothing, in memory or on disk.
public actor HelperEngine {
    /// Name of the profile that covers every client no other profile claims (SPEC §9).
    public static let defaultProfile = "default"

    /// What the DNS side reads for every query.
    public nonisolated let box: EnforcementBox
    /// Where the DNS side reports blocked queries on managed names.
    public nonisolated let urges: UrgeRecorder
    /// Wakes the engine's timer from the DNS path (a snapshot due for a rebuild) and from `urges`.
    package nonisolated let wakeTarget = WakeTarget()
    /// Client address → MAC, for profiles that name devices by MAC (SPEC §9).
    public nonisolated let neighbours = NeighbourCache()
    /// Every event committed, pushed to live readers (`EventFeed`: the event stream, the page).
    public nonisolated let eventFeed = EventFeed()

    /// Where the state lives (`StateStore`): the engine commits every change there before it answers.
    package let store: any StateStore
    let timeSource: any TimeSource
    package let catalog: Catalog
    package let logger: Logger
    /// Always-allowed hosts from the configuration; the hosts of list URLs are added to them.
    var configuredAllowed: [String]
    /// The fetched lists in force and the `setLists` calls under way (HelperEngine+Rules.swift).
    var listsLifecycle = ListsLifecycle()
    /// Fetched lists in force, by name: each is an entry people can block by name.
    /// A stored copy is kept as its file, not its rules (`ListRules`, SPEC §9).
    package var lists: [String: ListRules] { listsLifecycle.inForce.lists }
    /// Every configured list, fetched or not (`setLists`): a name here is an entry, never a domain.
    var listNames: Set<String> { listsLifecycle.inForce.names }
    var clock: TrustedClock
    /// Index 0 is the default profile; the others follow by name.
    package var profiles: [ProfileRuntime]
    /// Plans and alternatives (SPEC §8) and the bypass flows that show them (`PlanBook`).
    var planBook: PlanBook
    /// Members' requests for time, oldest first; answered ones are kept as history (`TimeRequests`).
    var requests: TimeRequests
    var tables: MatcherTables
    var publishHandler: (@Sendable (Enforcement) -> Void)?
    /// What the next commit owes the store: tamper events, rewound wallets, a change the disk
    /// refused; and how the writes are going (`CommitBooks`).
    var books = CommitBooks()
    /// Retention (SPEC §12) runs at start and then once a day from the timer.
    var nextRetentionAt = Instant(millisecondsSince1970: .max)
    /// When milestones and the weekly digest (SPEC §7) are looked for next, and how those looks go (`InsightChecks`).
    var insightChecks = InsightChecks()
    /// `[digest] command`: run once per weekly digest written.
    package var digestHook = DigestHookSettings()
    /// `[notify] command`: run for each new request for time (`deliverNotifyHook`).
    package var notifyHook = DigestHookSettings()
    /// Digest hooks running now; the timer loop's end (the helper's stop) ends them.
    let runningHooks = RunningHooks()
    /// What the configuration file asks of the profiles: the profiles it names, what of them waits
    /// for a lock, the profile unknown devices follow (`ConfiguredProfiles`).
    var configuredProfiles: ConfiguredProfiles

    /// Recent refusal rows, to coalesce bursts (`RefusalLog`, HelperEngine+Reports.swift).
    var refusalLog = RefusalLog()
    /// Who makes the changes in progress when it is not a request's caller (the configuration file).
    var actorOverride: String?
    /// Reloads from a shared store ("A shared store" below).
    var sharedReloads = 0
    /// The household's lists as last loaded or committed (`ListSource`); the lists controller
    /// downloads each of them on this helper.
    public internal(set) var listSources: [ListSource]
    /// What the household holds of each list a refresh shrank under a lock, as last loaded or
    /// committed (`HeldListSummary`, by name); each helper keeps the names themselves in force
    /// from its own `<name>.held`, written when a revision here moves.
    public internal(set) var heldLists: [HeldListSummary]
    /// Told after a load or commit changed `listSources` or another helper changed `heldLists`
    /// (`setListSourcesHandler`).
    var listSourcesHandler: (@Sendable () -> Void)?

    // Timer loop (below, `run`).
    var wakeContinuation: CheckedContinuation<Void, Never>?
    var wakeRequested = false
    /// The sleep ended only to be planned again (`replan`), not for work.
    var replanned = false

    /// Opens the store, loads the state, sets the trusted clock from the saved anchor, and does the
    /// start-up work of SPEC §4 and §11 in one commit: a tamper event when the clock moved while the
    /// helper was stopped, starter credit on first setup, wallets resumed (the downtime earns
    /// nothing), then retention (SPEC §12). The enforcement is published before this returns.
    public static func start(configuration: EngineConfiguration, timeSource: any TimeSource,
                             logger: Logger = Logger(label: "scrolloff.engine")) async throws(EngineError) -> HelperEngine {
        let store: Store
        do { store = try Store(directory: configuration.stateDirectory) } catch { throw EngineError(error) }
        return try await start(configuration: configuration, store: store, timeSource: timeSource, logger: logger)
    }

    /// `start` on a store already open: any backend that keeps the state (`StateStore`);
    /// `configuration.stateDirectory` is then not read.
    package static func start(configuration: EngineConfiguration, store: any StateStore, timeSource: any TimeSource,
                              logger: Logger = Logger(label: "scrolloff.engine")) async throws(EngineError) -> HelperEngine {
        let loaded: StoredState
        do { loaded = try store.load() } catch { throw EngineError(error) }
        let clock = TrustedClock(anchor: loaded.anchor, buildDate: configuration.buildDate, reading: timeSource.read())
        let engine = try HelperEngine(configuration: configuration, store: store, loaded: loaded, clock: clock,
                                      timeSource: timeSource, logger: logger)
        try await engine.finishStart(defaultTimeZoneID: configuration.defaultTimeZoneID, preset: configuration.defaultPreset,
                                     lastRun: loaded.anchor?.trusted)
        return engine
    }

    private init(configuration: EngineConfiguration, store: any StateStore, loaded: StoredState, clock: TrustedClock,
                 timeSource: any TimeSource, logger: Logger) throws(EngineError) {
        let box = EnforcementBox(.empty(clock: clock))
        self.box = box
        let wakeTarget = self.wakeTarget
        urges = UrgeRecorder(wake: { wakeTarget.replan() })
        self.store = store
        self.timeSource = timeSource
        catalog = configuration.catalog
        self.logger = logger
        configuredAllowed = configuration.extraAllowedHosts
        self.clock = clock
        let now = clock.now
        var runtimes: [ProfileRuntime] = []
        for p in loaded.profiles { runtimes.append(try ProfileRuntime.make(p, now: now)) }
        profiles = Self.ordered(runtimes)
        planBook = PlanBook(plans: loaded.plans, alternatives: loaded.alternatives)
        requests = TimeRequests(loaded.timeRequests)
        configuredProfiles = ConfiguredProfiles(unknownDevices: loaded.settings[ConfiguredProfiles.unknownDevicesKey] ?? Self.defaultProfile)
        listSources = loaded.listSources
        heldLists = loaded.heldLists
        tables = .empty(MatcherInputs(listGeneration: -1))
        wakeTarget.target = self
    }

    /// - Parameter lastRun: the trusted time of the last commit (the saved anchor), the last instant
    ///   the helper is known to have run; a spend still running then ends there (SPEC §4).
    private func finishStart(defaultTimeZoneID: String?, preset: Preset, lastRun: Instant?) throws(EngineError) {
        let now = clock.now
        // Curfews stored before the joined 16 h cap (SPEC §2) stay as they are (removing one may be
        // locked); the log says which join up, so a person can leave a gap once the lock allows.
        for p in profiles {
            if let o = CurfewJoin.overrun(in: p.schedules, at: now) {
                logger.warning("curfews that join up past the 16 h cap: \(ScheduleError.curfewsJoinTooLong(entry: o.entry?.rawValue, schedules: o.schedules, minutes: o.minutes).message)",
                               metadata: ["profile": "\(p.name)"])
            }
        }
        var change = StateChange()
        if let jump = clock.startJump { books.noteJump(jump) }
        if profiles.isEmpty {
            let settings = ProfileSettings(name: Self.defaultProfile, timeZoneID: defaultTimeZoneID ?? ProfileRuntime.systemTimeZoneID, preset: preset)
            change.append(.saveProfile(settings))
            var fresh = try ProfileRuntime.fresh(settings, now: now)
            let starter = fresh.account.grantStarter(at: now)
            change.record(starter, account: fresh.account.state, profile: fresh.name)
            profiles = [fresh]
        }
        var work = profiles
        // A shared store whose state another helper settled within the last minute and a half (it
        // commits at least every `spendCheckpoint` while a spend runs): the household never
        // stopped, so there is no downtime to resume from — a spend it runs goes on, and the
        // abstinence hour keeps its start. The settling in `commit` brings the wallets to now.
        let householdRan = store.isShared && work.contains { $0.account.wallet.state.asOf >= now - .seconds(90) }
        for i in work.indices where householdRan {
            work[i].protectedSince = nil
            work[i].reminderCursor = now
        }
        for i in work.indices where !householdRan {
            // State dated later than the trusted clock: it was moved back (NTP at this start, or
            // root's `scrolloff-dns clock reset` before it). Cut to now (`Wallet.rewind`).
            let rewound = work[i].account.rewind(to: now)
            change.record(rewound, account: work[i].account.state, profile: work[i].name)
            // The gap since the last commit was not enforced, so it earns nothing and charges
            // nothing (SPEC §4, §11): a spend running at the stop ends where the helper last ran.
            let out = work[i].account.resume(at: now, blockInForce: work[i].blockInForce(at: now), lastRun: lastRun)
            change.record(out, account: work[i].account.state, profile: work[i].name)
            work[i].protectedSince = nil
            work[i].reminderCursor = now
        }
        do {
            try commit(&change, profiles: &work, now: now)
        } catch {
            if store.isShared {
                // Nothing is held for a shared store (another helper may decide meanwhile): the
                // state read, or the one a stale commit reloaded, is enforced, and the timer's
                // next commit settles the books from it.
                rebuild(now: now)
                nextRetentionAt = now + .hours(24)
                return
            }
            // The rules were read, so they are enforced even when the disk refuses the write (full
            // or read-only; SPEC §3): the start's bookkeeping is held and written with the next
            // commit that succeeds (the timer retries with back-off; `commit` logged the failure,
            // `doctor` shows it). The resumed wallets are kept, so the downtime earns nothing even
            // when the books are written later; a kill before that loads the old books and resumes
            // them again, from the same point.
            hold(change, profiles: work, now: now)
            // Retention only tidies; it runs with the next start or the daily timer.
            nextRetentionAt = now + .hours(24)
            return
        }
        applyRetention(now: now)
    }

    /// Keeps a change the disk refused for the next commit, and keeps and enforces the state it
    /// describes; the timer retries the write at once and then with `CommitHealth`'s back-off.
    /// Only for changes that are safe to enforce before they are on disk: a kill before the write
    /// loads the state from before them, which is the start's own point (it resumes again) or a
    /// spend that charges on (a `stop` lost, never credit paid twice).
    package func hold(_ change: StateChange, profiles work: [ProfileRuntime], now: Instant) {
        // `commit` already put the tamper events into `change`; they must not be written twice.
        books.hold(change)
        profiles = work
        rebuild(now: now)
        wake()
    }

    /// Rolls rows older than 90 days into daily totals (SPEC §12) and schedules the next run.
    func applyRetention(now: Instant) {
        nextRetentionAt = now + .hours(24)
        do {
            let report = try store.applyRetention(now: now, days: Store.retention)
            requests.forgetRetained(now: now)
            if report.ledgerRowsDeleted + report.eventsDeleted > 0 {
                logger.info("retention rolled up old rows", metadata: ["store.days": "\(report.daysRolledUp)",
                                                                     "store.ledger_rows": "\(report.ledgerRowsDeleted)"])
            }
        } catch {
            // Retention only tidies; a failure must not keep the helper from enforcing.
            logger.warning("retention failed; it runs again at the next start", metadata: ["error": "\(error)"])
        }
    }

    // MARK: The trusted clock

    /// Advances the trusted clock to a fresh reading and keeps any tamper event for the next commit.
    package func advanceClock() -> Instant {
        if let jump = clock.advance(to: timeSource.read()) {
            books.noteJump(jump)
            if jump.correction != nil { rewindProfiles(to: clock.now) }
        }
        return clock.now
    }

    /// The trusted clock was moved back (SPEC §11 clock recovery): what each profile holds on the
    /// old, later clock is cut to `now` at once, before any command runs on the new time, so no
    /// grant opened on the wrong clock stays open for the whole correction. Rules keep their
    /// absolute instants (a lock until 18:00 ends at 18:00). The wallets' rows and events are
    /// written with the next commit, beside the tamper event.
    func rewindProfiles(to now: Instant) {
        for i in profiles.indices {
            let out = profiles[i].account.rewind(to: now)
            books.noteRewind(profile: profiles[i].name, out)
            profiles[i].reminderCursor = min(profiles[i].reminderCursor, now)
            if let since = profiles[i].protectedSince, since > now { profiles[i].protectedSince = now }
        }
    }

    /// The trusted time now, for callers that only read (SPEC §11).
    public func trustedNow() -> Instant { advanceClock() }

    // MARK: Commands run here

    /// Runs one command: advances the clock, lets `body` change a copy of the profiles and add to
    /// the change, brings every wallet up to date with whether a block is now in force, commits all
    /// of it with the clock anchor in one transaction, and only then keeps the copy, rebuilds the
    /// enforcement and wakes the timers.
    /// - Parameter holdIfWriteFails: the command only ends charging (`stop`), so when the disk
    ///   refuses the write it is kept in force and held for the next commit (``hold(_:profiles:now:)``)
    ///   instead of being refused; the second value says it was held.
    func perform<T>(holdIfWriteFails: Bool = false, _ body: (inout Work) throws(EngineError) -> T) throws(EngineError) -> (T, held: Bool) {
        // A shared store refused the commit because another helper committed first: the state
        // was reloaded, and the command is decided again on it ("A shared store" below).
        var attempt = 1
        while true {
            do throws(EngineError) {
                return try performOnce(holdIfWriteFails: holdIfWriteFails, body)
            } catch {
                guard case .storage(let text) = error, text == Self.staleText, attempt < Self.staleRetries else { throw error }
                attempt += 1
            }
        }
    }

    private func performOnce<T>(holdIfWriteFails: Bool, _ body: (inout Work) throws(EngineError) -> T) throws(EngineError) -> (T, held: Bool) {
        let now = advanceClock()
        var work = Work(now: now, profiles: profiles, change: StateChange())
        // The time up to now is settled under the rules as they were: a spend that stopped at a
        // window end or a curfew start stopped under them, and a rule the command changes applies
        // from now on, never to minutes already used (an `unblock` ends a spend now, not at its start).
        for i in work.profiles.indices { Self.settle(&work.profiles[i], at: now, into: &work.change) }
        let result = try body(&work)
        // SPEC §12: every rule the command changed, with who changed it, in the same commit.
        for event in RuleChanges.events(from: profiles, to: work.profiles, at: now, actor: currentActor) {
            work.change.append(.appendEvent(event))
        }
        do {
            try commit(&work.change, profiles: &work.profiles, now: now)
        } catch {
            // With a shared store a held change could not be applied later: another helper may
            // have decided on the state meanwhile. The command is refused instead (nothing changed).
            guard holdIfWriteFails, !store.isShared, case .storage = error else { throw error }
            hold(work.change, profiles: work.profiles, now: now)
            return (result, true)
        }
        wake()
        return (result, false)
    }

    func perform<T>(_ body: (inout Work) throws(EngineError) -> T) throws(EngineError) -> T {
        try perform(holdIfWriteFails: false, body).0
    }

    /// Shared tail of every state change: tamper events (and the earning freeze a jump back
    /// brings), wallets settled against the new rules, protected time, then COMMIT, then the state
    /// kept and the enforcement rebuilt.
    @discardableResult
    package func commit(_ change: inout StateChange, profiles work: inout [ProfileRuntime], now: Instant) throws(EngineError) -> CommitReceipt {
        books.recordRewinds(into: &change, profiles: work)
        for jump in books.jumps {
            if let correction = jump.correction {
                logger.warning("trusted clock moved back to the system clock", metadata: [
                    "clock.authority": "\(correction.rawValue)", "clock.offset_ms": "\(jump.offset.milliseconds)",
                ])
            } else {
                logger.warning("system clock and trusted clock differ; rules keep the trusted clock", metadata: [
                    "clock.direction": "\(jump.direction.rawValue)", "clock.offset_ms": "\(jump.offset.milliseconds)",
                ])
            }
            change.append(.appendEvent(StoredEvent(jump)))
            CommitBooks.freezeEarning(after: jump, profiles: &work, into: &change, at: now)
        }
        for i in work.indices { Self.settle(&work[i], at: now, into: &change) }
        let written: CommitReceipt
        let toWrite = books.toWrite(change)
        do {
            written = try store.commit(toWrite, anchor: clock.anchor)
        } catch {
            if case .staleSnapshot = error {
                // Not a failure: another helper was first. Its state is put in force, and the
                // caller decides again on it.
                reloadFromStore()
                throw EngineError.storage(Self.staleText)
            }
            noteCommit(failure: "\(error)", at: now)
            throw EngineError(error)
        }
        // Durable now: live readers hear of every event this commit wrote, each with its row id.
        eventFeed.publish(Self.appendedEvents(toWrite, ids: written.eventIDs))
        let receipt = books.committed(written, at: now)
        noteCommitSucceeded(at: now)
        profiles = work
        rebuild(now: now)
        return receipt
    }

    /// The text of the `.storage` error a stale commit becomes (`perform` retries on it).
    static let staleText = StoreError.staleSnapshot(location: "the household database").description

    /// The events `change` appended, with the ids the store gave them (in the order of its operations).
    static func appendedEvents(_ change: StateChange, ids: [Int64]) -> [StoredEvent] {
        var ids = ids.makeIterator()
        return change.operations.compactMap { op in
            guard case .appendEvent(var event) = op, let id = ids.next() else { return nil }
            event.id = id
            return event
        }
    }

    /// Tells the wallet whether a block is in force from `now` on (SPEC §4 abstinence) and writes
    /// the protected time (SPEC §7) since the last settlement.
    static func settle(_ p: inout ProfileRuntime, at now: Instant, into change: inout StateChange) {
        // A spend ends where it stops buying anything: a curfew began (SPEC §2, §4) or its block
        // ended. The timer wakes at that edge (the entry's state changes there); a late wake still
        // charges nothing past it.
        if let spend = p.account.wallet.runningSpend,
           let stop = p.rules.spendStops(on: spend.entry, from: p.account.wallet.state.asOf, to: min(now, spend.end)) {
            let out = p.account.endSpend(at: stop.at, reason: stop.curfew ? .curfew : .unblocked)
            change.record(out, account: p.account.state, profile: p.name)
        }
        let inForce = p.blockInForce(at: now)
        let out = p.account.advance(to: now, blockInForce: inForce)
        change.record(out, account: p.account.state, profile: p.name)
        if let since = p.protectedSince, now > since {
            change.append(.addProtectedTime(profile: p.name, from: since, to: now))
        }
        p.protectedSince = inForce ? now : nil
    }

    // MARK: Enforcement

    /// Logs a failed write: the first at once, then summaries ever further apart (`CommitHealth`).
    func noteCommit(failure: String, at now: Instant) {
        switch books.health.failed(failure, at: now) {
        case .failing?:
            logger.error("cannot write the state; rules stay enforced, the books catch up when writes succeed",
                         metadata: ["store.path": "\(store.location)", "error": "\(failure)"])
        case .stillFailing(let span, let attempts)?:
            logger.error("state writes still failing for \(SpanWords.describe(span)), \(attempts) attempts; rules stay enforced",
                         metadata: ["store.path": "\(store.location)", "error": "\(failure)"])
        default: break
        }
    }

    func noteCommitSucceeded(at now: Instant) {
        if case .recovered(let span, let attempts)? = books.health.succeeded(at: now) {
            logger.notice("state writes succeed again after \(SpanWords.describe(span)), \(attempts) failed attempts; the books are caught up",
                          metadata: ["store.path": "\(store.location)"])
        }
    }

    /// Rebuilds the snapshot (and the matcher when the entries changed) and publishes it.
    ///
    /// The wallets are brought to `now` on a copy first (as `status` does), so what time changed
    /// (a spend cut short by a midnight expiry) is enforced by every publish, not only by the
    /// commit that records it: while writes fail the held state lags, and a list refresh or a
    /// reload republishing it as it was would reopen the spend until its old end.
    ///
    /// The matcher is in two parts (`MatcherTables`). A change of the lists builds it whole here,
    /// holding the engine (a list change whose inputs moved while `setLists` built off the
    /// engine). A change of the custom domains or the allowed hosts alone (a person's `block
    /// new.example`, a reload) builds only the custom part, in milliseconds, and reuses the lists
    /// part in force: also while a list's copy cannot be read for a whole build, so a new custom
    /// domain is not held back by it.
    /// - Parameter trimming: a new matcher was just put in force (`setLists`), so the build's
    ///   garbage goes back after the publish.
    func rebuild(now: Instant, trimming: Bool = false) {
        let inputs = matcherInputs(now: now)
        var rebuilt = trimming
        if inputs.lists != tables.inputs.lists && inputs.lists != listsLifecycle.unbuildableInputs?.lists {
            // At a low priority, so the event loops answer while it runs (`LowPriorityWork`). Never
            // SCHED_IDLE, even within a refresh: this build holds the engine, so every engine call
            // (a person's block, status, a window edge) waits for it, and on busy cores an idle
            // thread gets a fraction of a percent of one.
            let (catalog, lists, fresh) = (catalog, lists, listsLifecycle.freshRules)
            let built = ListRefreshContext.$isRefresh.withValue(false) {
                LowPriorityWork.run { MatcherTables.build(catalog: catalog, lists: lists, fresh: fresh, inputs: inputs) }
            }
            listsLifecycle.freshRules = [:]
            rebuilt = install(built, inputs: inputs) || rebuilt
        }
        if inputs.customDiffers(from: tables.inputs) {
            // The custom part alone, on the lists part in force; the tables it replaces are freed
            // on the releaser thread (their lists part lives on in the new ones).
            let replaced = tables
            tables = tables.replacingCustom(inputs)
            Retirement.shared.retire(replaced.matcher)
        }
        publish(now: now, trimming: rebuilt)
    }

    /// Puts a matcher built for `inputs` in force, unless a list in force could not be read for
    /// it; true when it was put in force.
    ///
    /// A list in force whose copy no longer reads (changed on disk behind the store's back) would
    /// block nothing in the new matcher: the one in force stays, which still has its names (fail
    /// closed), until a new copy of the list arrives.
    func install(_ built: (tables: MatcherTables, unreadable: [String: String]), inputs: MatcherInputs) -> Bool {
        let lost = built.unreadable.keys.filter { tables.inputs.listNames.contains($0) }.sorted()
        // The matcher that goes is freed on the releaser thread once no enforcement holds it
        // (`Retirement`), not on the engine.
        Retirement.shared.retire(lost.isEmpty ? tables.matcher : built.tables.matcher)
        if lost.isEmpty {
            tables = built.tables
            listsLifecycle.unbuildableInputs = nil
        } else {
            listsLifecycle.unbuildableInputs = inputs
        }
        for (name, failure) in built.unreadable.sorted(by: { $0.key < $1.key }) {
            logger.warning(
                lost.contains(name)
                    ? "a stored list copy could not be read again to rebuild the matcher; the matcher in force stays, with its names, and the change that needed the rebuild waits for a good copy (scrolloff lists update NAME)"
                    : "a stored list copy could not be read; it blocks nothing until a good copy arrives (scrolloff lists update NAME)",
                metadata: ["list.name": "\(name)", "error": "\(failure)"])
        }
        return lost.isEmpty
    }

    /// Builds the snapshot for the matcher in force and publishes the enforcement.
    /// - Parameter trimming: a new matcher was just put in force, so the build's garbage goes back.
    func publish(now: Instant, trimming: Bool) {
        var profiles = self.profiles
        for i in profiles.indices { _ = profiles[i].account.advance(to: now, blockInForce: profiles[i].blockInForce(at: now)) }
        let rules = profiles.map(\.rules)
        let states = rules.map { tables.evaluate($0, at: now) }
        let snapshot = tables.snapshot(rules, at: now)
        let router = ClientRouter(networks: profiles.map(\.networks), macs: profiles.map(\.macs), neighbours: neighbours,
                                  unknownProfile: profiles.firstIndex { $0.name == configuredProfiles.unknownDevices } ?? 0)
        let enforcement = Enforcement(tables: tables, snapshot: snapshot, states: states,
                                      router: router, profileNames: profiles.map(\.name), clock: clock)
        box.publish(enforcement)
        publishHandler?(enforcement)
        // Parsing and building a large list free tens of MB of short-lived blocks that glibc
        // would keep resident until the next periodic trim (MemoryTrimService); hand them back
        // now that the new matcher is published (SPEC §9: memory per name).
        if trimming { MemoryTrimService.trimNow() }
    }

    /// Calls `handler` with every enforcement published from now on, and once with the current one:
    /// for consumers that keep their own copy (a sinkhole `PolicyStore`, hosts mode rewriting its
    /// section at every rule change and window edge, SPEC §10). Runs on the engine; keep it short.
    public func setPublishHandler(_ handler: @escaping @Sendable (Enforcement) -> Void) {
        publishHandler = handler
        handler(box.enforcement)
    }

    /// Replaces the always-allowed hosts of the configuration (a reload) and rebuilds the matcher.
    public func setExtraAllowedHosts(_ hosts: [String]) {
        configuredAllowed = hosts
        rebuild(now: advanceClock())
    }

    /// The default profile first, then the others by name (profile index = position).
    static func ordered(_ profiles: [ProfileRuntime]) -> [ProfileRuntime] {
        profiles.filter { $0.name == defaultProfile } + profiles.filter { $0.name != defaultProfile }.sorted { $0.name < $1.name }
    }

    /// The index of `name`, or a `notFound` naming the profiles there are.
    func profileIndex(_ name: String, in profiles: [ProfileRuntime]) throws(EngineError) -> Int {
        guard let i = profiles.firstIndex(where: { $0.name == name }) else {
            throw .notFound("There is no profile “\(name)”; profiles: \(profiles.map(\.name).joined(separator: ", ")).")
        }
        return i
    }

    // MARK: DNS path

    /// Counts a blocked query on a managed name as an urge (SPEC §7), once per entry that blocks
    /// for the client's profile; repeats from the same client for the same entry within 60 s are
    /// one episode. Call only for decisions that are `blocked && managed`, with the `enforcement`
    /// the decision was made with. Synchronous and cheap: the write happens later, in a batch.
    public nonisolated func recordUrge(_ decision: EnforcementDecision, enforcement: Enforcement, client: ClientIP, now: Instant) {
        urges.record(set: decision.entrySet, client: client, profile: decision.profile, now: now, enforcement: enforcement)
    }
}

/// A command's working copy.
struct Work {
    let now: Instant
    var profiles: [ProfileRuntime]
    var change: StateChange
}

extension HelperEngine: Wakeable {}

extension HelperEngine {
    /// The policy the resolver chain asks for every query, over the enforcement in force now: the
    /// same type `PolicyComposer` publishes, for `scrolloff-bench reply`, which drives the real
    /// chain without a running server (ARCHITECTURE principle 14: one decision path).
    public nonisolated func currentQueryPolicy() -> any QueryPolicy {
        EnforcementPolicy(enforcement: box.enforcement, urges: urges, wakeTarget: wakeTarget)
    }
}

// MARK: - The timer loop: what time changes, committed when it is due

extension HelperEngine: Service {
    /// The timer loop (SPEC §3: timers fire at the next instant ScrollOffCore computes, not by
    /// polling). Sleeps until ``nextDueInstant()`` or until a command wakes it, then runs
    /// ``tick()``; an urge batch only makes it plan its sleep again (``replan()``), to the batch's
    /// due instant. Ends on cancellation or graceful shutdown, writing pending urges first.
    public func run() async throws {
        await cancelWhenGracefulShutdown {
            // A weekly digest missed while the helper was down is written now, at the start, and
            // handed to the hook the configuration (applied before the services run) names.
            await self.deliverDigests(self.recordInsightMarks(now: self.advanceClock()))
            while !Task.isCancelled {
                // Woken only to plan again (an urge batch now due within 250 ms): sleep again.
                guard await self.sleepUntilDue() else { continue }
                guard !Task.isCancelled else { break }
                do {
                    try await self.tick()
                } catch {
                    // A failed write leaves the held state as it was (the enforcement was still
                    // published) and is logged with back-off by `commit`; retry the same work after
                    // a pause that grows with the failures.
                    let delay = await self.books.health.retryDelay
                    try? await Task.sleep(for: .milliseconds(delay.milliseconds))
                }
            }
            try? await self.flushUrges()
            await self.settleSpendsAtStop()
        }
        // No digest hook outlives the helper: SIGTERM, and SIGKILL only after the grace time.
        await runningHooks.stopAll()
    }

    /// The earliest instant anything is due: a wallet's next award, expiry or grant end, the
    /// snapshot's `validUntil` (window and grant edges), a curfew reminder, a local midnight, or
    /// the pending urge batch. Nil when nothing is scheduled (then only a wake ends the sleep).
    public func nextDueInstant() -> Instant? {
        var due: Instant?
        func consider(_ t: Instant?) { if let t, due.map({ t < $0 }) ?? true { due = t } }
        let now = clock.now
        for p in profiles {
            consider(p.account.wallet.nextDueInstant)
            consider(p.rules.nextCurfewReminder(after: p.reminderCursor)?.remindAt)
            consider(p.calendar.nextMidnight(after: now))
            consider(WeeklyDigest.next(after: now, calendar: p.calendar))
        }
        let snapshot = box.enforcement.snapshot
        consider(snapshot.validUntil)
        consider(snapshot.refreshAt)
        consider(urges.flushDue)
        for held in configuredProfiles.dues { consider(held) }
        consider(requests.nextExpiry)
        // A running spend is committed at least every `spendCheckpoint`: a helper that dies (kill -9,
        // a power cut) is charged up to its last commit and nothing after (SPEC §4), so this bounds
        // the time a pulled plug can leave unpaid.
        if let last = books.lastCommitAt, profiles.contains(where: { $0.account.wallet.runningSpend != nil }) {
            consider(last + Self.spendCheckpoint)
        }
        // Held changes wait for the disk: retry now (the loop's back-off paces it).
        if books.held != nil { consider(now) }
        return due
    }

    /// Whether the timer's writes are failing now, for `doctor`: since when, how many attempts, the error.
    package func writeFailure() -> (since: Instant, attempts: Int, error: String)? {
        guard let since = books.health.failingSince else { return nil }
        return (since, books.health.attempts, books.health.lastError ?? "unknown")
    }

    /// One wake: advances the trusted clock by the boot clock (recording a tamper event on a
    /// jump), settles every wallet (awards, expiries, grant ends at zero credit), emits due curfew
    /// reminders, writes the urge batch, commits, and publishes the new enforcement at once, so a
    /// spend running out blocks again within the 250 ms of SPEC §4.
    public func tick() throws(EngineError) {
        let now = advanceClock()
        var change = StateChange()
        var work = profiles
        for i in work.indices {
            var cursor = work[i].reminderCursor
            // SPEC §12: focus sessions that ended since the last tick, as `focusEnded` events.
            for event in RuleChanges.focusEnds(of: work[i], after: cursor, through: now) { change.append(.appendEvent(event)) }
            for event in RuleChanges.pauseEnds(of: work[i], after: cursor, through: now) { change.append(.appendEvent(event)) }
            while let r = work[i].rules.nextCurfewReminder(after: cursor), r.remindAt <= now {
                // A reminder whose curfew already started (the helper was asleep) has no use any more.
                if now < r.occurrence.start { change.append(.appendEvent(StoredEvent(r, profile: work[i].name))) }
                cursor = r.remindAt
            }
            work[i].reminderCursor = max(cursor, now)
        }
        let batch = urges.drain()
        for u in batch where work.contains(where: { $0.name == u.profile }) { change.append(.appendEvent(Self.event(u))) }
        do {
            try commit(&change, profiles: &work, now: now)
        } catch {
            urges.restore(batch)
            // Time-driven changes never wait for the disk (SPEC §3): publish what the wallets and
            // rules say now (`rebuild` settles the wallets on a copy); the books are written by the retry.
            rebuild(now: now)
            throw error
        }
        if now >= nextRetentionAt { applyRetention(now: now) }
        applyHeldBackProfilesIfDue(now: now)
        applyHeldUnknownDevicesIfDue(now: now)
        expireTimeRequestsIfDue(now: now)
        if now >= insightChecks.nextAt { deliverDigests(recordInsightMarks(now: now)) }
    }

    /// Writes the pending urges now (before `events` or `stats` read them).
    func flushUrges() throws(EngineError) {
        // A clock jump seen since the last commit is written with the batch (or alone), so a read of
        // events or stats right after the jump already shows its tamper event (SPEC §11).
        let now = advanceClock()
        let batch = urges.drain()
        guard !batch.isEmpty || !books.jumps.isEmpty else { return }
        var change = StateChange()
        for u in batch where profiles.contains(where: { $0.name == u.profile }) { change.append(.appendEvent(Self.event(u))) }
        do { _ = try commitReturning(change, now: now) } catch {
            urges.restore(batch)
            throw error
        }
    }

    /// How often a running spend is committed (``nextDueInstant()``).
    static let spendCheckpoint = Span.seconds(30)

    /// At a graceful stop a running spend is charged up to the stop and the anchor written then,
    /// so the next start, which ends it where the helper last ran (SPEC §4: nothing charged for the
    /// downtime), ends it exactly at the stop. A failed write leaves it to the last commit.
    func settleSpendsAtStop() {
        guard profiles.contains(where: { $0.account.wallet.runningSpend != nil }) else { return }
        let now = advanceClock()
        var change = StateChange()
        var work = profiles
        _ = try? commit(&change, profiles: &work, now: now)
    }

    /// The stored form of an urge (SPEC §7); the client address is kept for urges only (SPEC §9 privacy).
    /// Urges of a profile removed meanwhile are dropped by the callers.
    static func event(_ u: PendingUrge) -> StoredEvent {
        StoredEvent(profile: u.profile, time: u.time, kind: .urge, entry: u.entry, clientIP: u.client.description,
                    message: "\(u.entry) was asked for and stayed blocked.")
    }

    /// Called from the DNS path when a query finds the snapshot due for a rebuild.
    public nonisolated func wakeForRebuild() {
        Task { await self.wake() }
    }

    /// Ends the timer's sleep early: a command changed what is due.
    public func wake() {
        if let c = wakeContinuation {
            wakeContinuation = nil
            c.resume()
        } else {
            wakeRequested = true
        }
    }

    /// Ends the timer's sleep so it is planned again, without a tick: the DNS path's first urge of
    /// a batch, due `UrgeRecorder.flushDelay` later. A tick here would write every urge on its own
    /// (a commit, a snapshot rebuild and a write to every live reader per blocked query under a
    /// flood). While the loop is busy nothing is needed: it plans its next sleep with the batch in view.
    public func replan() {
        guard let c = wakeContinuation else { return }
        wakeContinuation = nil
        replanned = true
        c.resume()
    }

    /// Sleeps until the next due instant (measured on the trusted clock, which runs on the boot
    /// clock like `ContinuousClock`), a wake, or cancellation.
    /// - Returns: false when the sleep ended only to be planned again (`replan`).
    func sleepUntilDue() async -> Bool {
        if wakeRequested {
            wakeRequested = false
            return true
        }
        let now = advanceClock()
        // A jump seen just now is recorded at once rather than at the next due instant.
        guard books.jumps.isEmpty else { return true }
        let timer: Task<Void, Never>? = nextDueInstant().map { due in
            let delay = max(0, (due - now).milliseconds)
            return Task { [weak self] in
                guard (try? await Task.sleep(for: .milliseconds(delay))) != nil else { return }
                await self?.wake()
            }
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in wakeContinuation = c }
        } onCancel: {
            Task { [weak self] in await self?.wake() }
        }
        timer?.cancel()
        defer { replanned = false }
        return !replanned
    }
}

// MARK: - A shared store

/// Several helpers on one shared store (`[store] backend = "postgresql"`, docs/operations.md).
///
/// The store refuses a commit decided on a state older than its last commit
/// (`StoreError.staleSnapshot`); the engine then reloads the state the other node left and runs
/// the command again on it, so a spend, peek or token is decided once on the household's state,
/// whichever helper is asked (SPEC §4 and §5 hold across helpers). When another helper commits,
/// this one reloads (`reloadFromStore`, called by the store's listener) and republishes its DNS
/// snapshot; DNS never waits for the database, it answers from the snapshot in force.
extension HelperEngine {
    /// How many times a command is decided again after another helper committed first.
    static let staleRetries = 3

    /// Reads the whole state again from the store and puts it in force: after another helper's
    /// commit, or after this one's commit was refused as stale. What only this node knows is kept
    /// per profile (its reminder cursor); protected time is counted from the reload on, so time
    /// another helper already wrote is not written twice.
    /// - Returns: false when the store could not be read (the state in force stays).
    @discardableResult
    package func reloadFromStore() -> Bool {
        let loaded: StoredState
        do { loaded = try store.load() } catch {
            logger.warning("could not reload the household's state; the rules in force stay", metadata: ["error": "\(error)"])
            return false
        }
        let now = advanceClock()
        var runtimes: [ProfileRuntime] = []
        for p in loaded.profiles {
            do {
                var r = try ProfileRuntime.make(p, now: now)
                if let old = profiles.first(where: { $0.name == r.name }) { r.reminderCursor = old.reminderCursor }
                r.protectedSince = r.blockInForce(at: now) ? max(now, r.account.wallet.state.asOf) : nil
                runtimes.append(r)
            } catch {
                logger.error("a profile read from the household's store cannot be used; the rules in force stay",
                             metadata: ["profile": "\(p.settings.name)", "error": "\(error)"])
                return false
            }
        }
        profiles = Self.ordered(runtimes)
        planBook = PlanBook(plans: loaded.plans, alternatives: loaded.alternatives)
        requests = TimeRequests(loaded.timeRequests)
        configuredProfiles.unknownDevices = loaded.settings[ConfiguredProfiles.unknownDevicesKey] ?? configuredProfiles.unknownDevices
        // Another helper added or removed a list: this one downloads or drops its own copy.
        // Or changed the names held of a list: this one writes them into its own held file.
        if loaded.listSources != listSources || loaded.heldLists != heldLists {
            listSources = loaded.listSources
            heldLists = loaded.heldLists
            listSourcesHandler?()
        }
        books.dropHeld()
        sharedReloads += 1
        rebuild(now: now)
        wake()
        return true
    }

    /// How many times the state was reloaded from a shared store, for `doctor` and the tests.
    package var reloadCount: Int { sharedReloads }
}
