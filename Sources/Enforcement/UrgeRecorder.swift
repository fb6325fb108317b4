import ScrollOffCore
import NIOConcurrencyHelpers

/// Collapses blocked queries into urge episodes (SPEC §7: "blocked queries for one entry from one
/// client, collapsed into one episode per 60 s") and holds them until the engine writes them in one
/// transaction, so a phone retrying a blocked name ten times a second costs no disk writes.
///
/// Why a batch `flushDelay` long, and published only once written: live readers (the event
/// stream, SPEC §12) must hear of an urge within 1 s, and every event they get carries the event
/// log's own row id, so a reader that resumes from an id (after a drop, or across a restart of the
/// helper) gets exactly what it did not see. An urge published before its row exists would need an
/// id the store has not given (with a shared PostgreSQL store another helper takes ids from the same
/// sequence), and a crash before the write would leave readers holding an event the log never had.
/// So the batch is written within `flushDelay` of its first urge and published with its ids right
/// after the commit: well inside the second, and at most a few commits a second however many urges
/// come (before, the first urge of each batch woke a full tick at once: under a flood of new
/// episodes the engine committed, rebuilt its snapshot and wrote to every reader for nearly every
/// blocked query; docs/benchmarks.md "Urges and the event stream").
///
/// Called from the DNS path, so it is synchronous and takes a lock only to look up one small table;
/// a repeat within the episode allocates nothing. Memory is bounded: at most ``maximumTracked``
/// open episodes and ``maximumPending`` unwritten urges; past those, urges are counted as dropped
/// rather than growing without end under a flood.
public final class UrgeRecorder: Sendable {
    /// SPEC §7: one episode per 60 s.
    public static let episode = Span.seconds(60)
    /// Urges wait at most this long for their batch (the engine's timer fires then): short enough
    /// that a live reader hears of an urge well within 1 s, long enough that a flood is a few
    /// commits a second, not one per blocked query.
    public static let flushDelay = Span(milliseconds: 250)
    /// A batch this large is written at once.
    public static let flushCount = 256
    public static let maximumTracked = 4096
    public static let maximumPending = 10_000

    /// One episode: one entry of one profile, from one client (SPEC §7). Keyed by entry rather
    /// than by the matcher's entry set, so a name listed by two entries and another name of one of
    /// them do not start separate episodes for the same entry.
    struct Key: Hashable {
        var profile: Int
        var entry: UInt32
        var client: ClientIP
    }

    struct State {
        var episodeStart: [Key: Instant] = [:]
        /// The episode last looked up or started, equal to its entry in `episodeStart` (every write
        /// of that entry updates it, a sweep clears it): a phone retrying one blocked name, the
        /// common repeat, is found by comparing a key instead of hashing it (the lookup with its
        /// `Hasher` was 2% of a blocked reply's CPU, SPEC §9).
        var lastEpisode: (key: Key, start: Instant)?
        var pending: [PendingUrge] = []
        var dropped = 0
        /// When ended episodes were last swept out of `episodeStart`; see `pruneIfDue`.
        var lastPrune = Instant(millisecondsSince1970: 0)
        /// Clients whose blocked queries are `doctor`'s probes until the instant given; see `excuseProbe`.
        var excused: [Excused: Instant] = [:]
    }

    struct Excused: Hashable {
        var profile: Int
        var client: ClientIP
    }

    /// How long after `doctor` asked for its probe name a blocked query from its address is the probe.
    public static let probeGrace = Span.seconds(10)
    /// Most clients excused at once; `doctor` runs from one machine, so a handful is plenty.
    static let maximumExcused = 16

    private let state = NIOLockedValueBox(State())
    /// Tells the engine's timer when the first urge of a batch arrives (or a batch fills up), so
    /// it plans its next wake by `flushDue`; it does not run the timer's work now.
    private let wake: @Sendable () -> Void

    package init(wake: @escaping @Sendable () -> Void) { self.wake = wake }

    /// Records a blocked query on a managed entry set, for the entries of the set that block for
    /// `profile` in `enforcement` (the one the decision was made with, so the entry indices and
    /// states agree with it even if a newer one was published since). An entry of the set that is
    /// open or not ruled for this profile is no urge: the query was blocked for another entry.
    /// - Returns: how many entries started a new episode (were counted as urges).
    @discardableResult
    package func record(set: UInt32, client: ClientIP, profile: Int, now: Instant, enforcement: Enforcement) -> Int {
        let sets = enforcement.tables.entrySets
        guard Int(set) < sets.count, profile >= 0, profile < enforcement.states.count else { return 0 }
        // Under a strict curfew every listed name is blocked, so each entry of the set counts.
        let strict = enforcement.isStrictCurfew(profile: profile, now: now)
        var started = 0
        for index in sets[Int(set)] {
            let i = Int(index)
            // The entry's state at the query's instant, from the snapshot's timeline: right even
            // when a window edge passed since the build.
            let blocking = enforcement.snapshot.kind(profile: profile, entry: i, now: now).isBlocking
            guard i < enforcement.tables.entries.count, strict || blocking else { continue }
            if recordEpisode(Key(profile: profile, entry: index, client: client), entry: enforcement.tables.entries[i],
                             now: now, enforcement: enforcement) {
                started += 1
            }
        }
        return started
    }

    /// Starts an episode for `key` unless one is running. A repeat within the episode takes the
    /// lock once and allocates nothing.
    private func recordEpisode(_ key: Key, entry: EntryID, now: Instant, enforcement: Enforcement) -> Bool {
        let isNew = state.withLockedValue { s -> Bool in !Self.isRunning(Self.start(of: key, in: &s), now: now) }
        guard isNew else { return false }
        // Once per episode, not per query; the client's text is made by the engine when it writes
        // the batch, off the DNS path (`PendingUrge.client`).
        let profileName = key.profile < enforcement.profileNames.count
            ? enforcement.profileNames[key.profile] : enforcement.profileNames.first ?? "default"
        let outcome = state.withLockedValue { s -> (counted: Bool, wake: Bool) in
            if Self.isRunning(s.episodeStart[key], now: now) { return (false, false) } // raced
            if !s.excused.isEmpty, let until = s.excused[Excused(profile: key.profile, client: key.client)],
               now <= until, now >= until - Self.probeGrace {
                // doctor's probe: a check, not an urge. The episode still starts, so the probe's
                // retries within 60 s are not counted either.
                Self.startEpisode(key, now: now, in: &s)
                return (false, false)
            }
            if s.episodeStart.count >= Self.maximumTracked {
                Self.pruneIfDue(&s, now: now)
                // Still full: a flood of distinct clients. Count it rather than grow.
                if s.episodeStart.count >= Self.maximumTracked {
                    s.dropped += 1
                    return (false, false)
                }
            }
            guard s.pending.count < Self.maximumPending else {
                s.dropped += 1
                return (false, false)
            }
            Self.startEpisode(key, now: now, in: &s)
            let wasEmpty = s.pending.isEmpty
            s.pending.append(PendingUrge(profile: profileName, entry: entry, client: key.client, time: now))
            return (true, wasEmpty || s.pending.count == Self.flushCount)
        }
        if outcome.wake { wake() }
        return outcome.counted
    }

    /// `scrolloff doctor` (SPEC §11) probes a blocked name from its own address; that query checks
    /// the sinkhole and is no urge (SPEC §7), so blocked queries from `client` for `profile` within
    /// `probeGrace` of now start an episode without being counted. A person's own query in those
    /// seconds from that address is not counted either, which is the price of not counting doctor.
    package func excuseProbe(profile: Int, client: ClientIP, now: Instant) {
        state.withLockedValue { s in
            s.excused = s.excused.filter { now <= $0.value && now >= $0.value - Self.probeGrace }
            guard s.excused.count < Self.maximumExcused else { return }
            s.excused[Excused(profile: profile, client: client)] = now + Self.probeGrace
        }
    }

    /// When `key`'s episode started, if one is tracked; through `lastEpisode` when it is that one.
    private static func start(of key: Key, in s: inout State) -> Instant? {
        if let last = s.lastEpisode, last.key == key { return last.start }
        let start = s.episodeStart[key]
        if let start { s.lastEpisode = (key, start) }
        return start
    }

    /// The one way an episode starts, so that `lastEpisode` never disagrees with `episodeStart`.
    private static func startEpisode(_ key: Key, now: Instant, in s: inout State) {
        s.episodeStart[key] = now
        s.lastEpisode = (key, now)
    }

    private static func isRunning(_ start: Instant?, now: Instant) -> Bool {
        guard let start else { return false }
        return now >= start && now - start < episode
    }

    /// Sweeps ended episodes out, at most once a second: a full table under a flood would
    /// otherwise be walked on every query. `drain()` sweeps too, every batch.
    private static func pruneIfDue(_ s: inout State, now: Instant) {
        guard now - s.lastPrune >= .seconds(1) || now < s.lastPrune else { return }
        s.lastPrune = now
        s.episodeStart = s.episodeStart.filter { isRunning($0.value, now: now) }
        s.lastEpisode = nil
    }

    /// When the pending batch should be written: `flushDelay` after its oldest urge, or now when it is full.
    package var flushDue: Instant? {
        state.withLockedValue { s in
            guard let first = s.pending.first else { return nil }
            return s.pending.count >= Self.flushCount ? first.time : first.time + Self.flushDelay
        }
    }

    /// Takes the pending batch and sweeps ended episodes out (as of the newest urge taken).
    package func drain() -> [PendingUrge] {
        state.withLockedValue { s in
            let batch = s.pending
            s.pending = []
            if let newest = batch.last?.time { Self.pruneIfDue(&s, now: newest) }
            return batch
        }
    }

    /// Episodes tracked now (for tests of the bound).
    var trackedCount: Int { state.withLockedValue { $0.episodeStart.count } }

    /// Puts a batch back after a failed write, ahead of newer urges.
    package func restore(_ batch: [PendingUrge]) {
        state.withLockedValue { s in s.pending = Array((batch + s.pending).prefix(Self.maximumPending)) }
    }

    /// Urges recorded and not yet written (the metrics' `scrolloff_urges_pending`).
    public var pendingCount: Int { state.withLockedValue { $0.pending.count } }

    /// Urges not recorded because a bound was reached (reported by the engine's log).
    public var droppedCount: Int { state.withLockedValue { $0.dropped } }
}

/// One urge episode waiting to be written (SPEC §7).
package struct PendingUrge: Hashable, Sendable {
    package var profile: String
    package var entry: EntryID
    /// The address as recorded; spelled out (an allocation) when the batch is written, not on the DNS path.
    package var client: ClientIP
    package var time: Instant
}
