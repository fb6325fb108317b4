import ScrollOffCore
import Synchronization

/// Collapses blocked queries into urge episodes (SPEC §7: "blocked queries for one entry from one
/// client, collapsed into one episode per 60 s") and holds them until the engine writes them in one
/// transaction, so a phone retrying a blocked name ten times a second costs no disk writes.
///
/// Called from the DNS path, so it is synchronous and takes a lock only to look up one small table;
/// a repeat within the episode allocates nothing. Memory is bounded: at most ``maximumTracked``
/// open episodes and ``maximumPending`` unwritten urges; past those, urges are counted as dropped
/// rather than growing without end under a flood.
public final class UrgeRecorder: Sendable {
    /// SPEC §7: one episode per 60 s.
    public static let episode = Span.seconds(60)
    /// Urges wait at most this long for their batch (the engine's timer fires then).
    public static let flushDelay = Span.seconds(5)
    /// A batch this large is written at once.
    public static let flushCount = 256
    public static let maximumTracked = 4096
    public static let maximumPending = 10_000

    struct Key: Hashable {
        var profile: Int
        var set: UInt32
        var client: ClientIP
    }

    struct State {
        var episodeStart: [Key: Instant] = [:]
        var pending: [PendingUrge] = []
        var dropped = 0
    }

    private let state = Mutex(State())
    /// Wakes the engine's timer when the first urge of a batch arrives (or a batch fills up).
    private let wake: @Sendable () -> Void

    init(wake: @escaping @Sendable () -> Void) { self.wake = wake }

    /// Records a blocked query on a managed entry set.
    /// - Returns: whether this query started a new episode (was counted as an urge).
    @discardableResult
    func record(set: UInt32, client: ClientIP, profile: Int, now: Instant, enforcement: Enforcement) -> Bool {
        let key = Key(profile: profile, set: set, client: client)
        let isNew = state.withLock { s -> Bool in
            if let start = s.episodeStart[key], now - start < Self.episode, now >= start { return false }
            return true
        }
        guard isNew else { return false }
        // Resolving names allocates; it happens once per episode, not per query.
        let entries = enforcement.entries(ofSet: set)
        let profileName = profile < enforcement.profileNames.count ? enforcement.profileNames[profile] : enforcement.profileNames.first ?? "default"
        let clientText = client.description
        let shouldWake = state.withLock { s -> Bool in
            if let start = s.episodeStart[key], now - start < Self.episode, now >= start { return false } // raced
            if s.episodeStart.count >= Self.maximumTracked {
                s.episodeStart = s.episodeStart.filter { now - $0.value < Self.episode }
                if s.episodeStart.count >= Self.maximumTracked {
                    s.dropped += 1
                    return false
                }
            }
            s.episodeStart[key] = now
            let wasEmpty = s.pending.isEmpty
            for entry in entries {
                guard s.pending.count < Self.maximumPending else { s.dropped += 1; break }
                s.pending.append(PendingUrge(profile: profileName, entry: entry, client: clientText, time: now))
            }
            return wasEmpty || s.pending.count == Self.flushCount
        }
        if shouldWake { wake() }
        return true
    }

    /// When the pending batch should be written: `flushDelay` after its oldest urge, or now when it is full.
    var flushDue: Instant? {
        state.withLock { s in
            guard let first = s.pending.first else { return nil }
            return s.pending.count >= Self.flushCount ? first.time : first.time + Self.flushDelay
        }
    }

    /// Takes the pending batch.
    func drain() -> [PendingUrge] {
        state.withLock { s in
            let batch = s.pending
            s.pending = []
            return batch
        }
    }

    /// Puts a batch back after a failed write, ahead of newer urges.
    func restore(_ batch: [PendingUrge]) {
        state.withLock { s in s.pending = Array((batch + s.pending).prefix(Self.maximumPending)) }
    }

    /// Urges not recorded because a bound was reached (reported by the engine's log).
    public var droppedCount: Int { state.withLock { $0.dropped } }
}
