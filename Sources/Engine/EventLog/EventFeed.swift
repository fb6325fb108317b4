import Store
import Synchronization

/// The events the engine has committed, pushed to live readers (`GET /v1/events/stream`, the
/// household page's live view, SPEC §9c): every kind, as the event log stores it, with its row id.
///
/// Why a push with a bounded buffer per reader: the engine publishes right after its commit, so a
/// reader hears of an event within milliseconds, with no reader polling the database; and
/// publishing only appends to each reader's buffer under a lock (no `await`), so a reader that
/// stops reading can never hold up a commit, the DNS path or another reader. When a reader's
/// buffer is full it is dropped from the feed: its stream ends after what it holds, `overflowed`
/// says why, and it resumes from the last id it got, from the database (the ids are the event
/// log's own, so that works across a restart of the helper too).
public final class EventFeed: Sendable {
    /// Commits' events one reader may hold unread (one item per commit: a batch of urges is one
    /// write to the reader, not 256); past this it is dropped (and told so).
    public static let defaultBuffer = 256

    public enum Item: Sendable, Hashable {
        /// The events of one commit the reader may see, oldest first.
        case events([StoredEvent])
        /// A tick for the reader's heartbeat (`EventSubscription.heartbeat()`), in the same queue
        /// as the events so one loop writes both.
        case heartbeat
    }

    struct Reader {
        var profiles: Set<String>
        let continuation: AsyncStream<Item>.Continuation
        let overflow: OverflowFlag
    }

    /// Set when the feed drops a reader for falling behind; shared with its `EventSubscription`.
    final class OverflowFlag: Sendable {
        let value = Atomic<Bool>(false)
    }

    private struct State {
        var nextReader = 0
        var readers: [Int: Reader] = [:]
    }

    private let state = Mutex(State())
    private let buffer: Int
    private let droppedTotal = Atomic<Int>(0)

    public init(buffer: Int = EventFeed.defaultBuffer) {
        self.buffer = max(1, buffer)
    }

    /// Readers dropped for falling behind since start (the metrics' counter).
    public var droppedReaders: Int { droppedTotal.load(ordering: .relaxed) }
    /// Readers following the feed now.
    public var readerCount: Int { state.withLock { $0.readers.count } }

    /// A new reader of the events of `profiles` and the machine-wide ones (no profile), as
    /// `scrolloff events` shows them; events committed from now on are queued for it.
    public func subscribe(profiles: Set<String>) -> EventSubscription {
        let (stream, continuation) = AsyncStream.makeStream(of: Item.self, bufferingPolicy: .bufferingOldest(buffer))
        let overflow = OverflowFlag()
        let id = state.withLock { state in
            let id = state.nextReader
            state.nextReader += 1
            state.readers[id] = Reader(profiles: profiles, continuation: continuation, overflow: overflow)
            return id
        }
        let subscription = EventSubscription(items: stream, id: id, feed: self, overflow: overflow)
        continuation.onTermination = { [weak self] _ in self?.remove(id) }
        return subscription
    }

    /// Queues committed events (with their ids) for every reader that may see them. Never waits:
    /// a reader whose buffer is full is dropped instead.
    package func publish(_ events: [StoredEvent]) {
        guard !events.isEmpty else { return }
        let dropped: [Reader] = state.withLock { state in
            var full: [Int] = []
            for (id, reader) in state.readers {
                let visible = events.filter { Self.visible($0, to: reader.profiles) }
                guard !visible.isEmpty else { continue }
                if case .dropped = reader.continuation.yield(.events(visible)) { full.append(id) }
            }
            return full.compactMap { state.readers.removeValue(forKey: $0) }
        }
        // Outside the lock: finishing runs the stream's termination handler, which takes it.
        for reader in dropped {
            reader.overflow.value.store(true, ordering: .relaxed)
            droppedTotal.add(1, ordering: .relaxed)
            reader.continuation.finish()
        }
    }

    /// SPEC §9a: a member never sees another profile's events; machine-wide ones (a tamper event)
    /// concern every profile, as in `scrolloff events`.
    public static func visible(_ event: StoredEvent, to profiles: Set<String>) -> Bool {
        guard let profile = event.profile else { return true }
        return profiles.contains(profile)
    }

    fileprivate func heartbeat(_ id: Int) {
        // A full buffer says enough: the reader is behind, and a tick more would only be dropped.
        _ = state.withLock { $0.readers[id]?.continuation.yield(.heartbeat) }
    }

    fileprivate func update(_ id: Int, profiles: Set<String>) {
        state.withLock { $0.readers[id]?.profiles = profiles }
    }

    fileprivate func remove(_ id: Int) {
        let reader = state.withLock { $0.readers.removeValue(forKey: id) }
        reader?.continuation.finish()
    }
}

/// One reader of the `EventFeed`: its queue of events, and whether the feed dropped it.
public final class EventSubscription: Sendable {
    public let items: AsyncStream<EventFeed.Item>
    let id: Int
    let feed: EventFeed
    private let overflow: EventFeed.OverflowFlag

    fileprivate init(items: AsyncStream<EventFeed.Item>, id: Int, feed: EventFeed, overflow: EventFeed.OverflowFlag) {
        self.items = items
        self.id = id
        self.feed = feed
        self.overflow = overflow
    }

    /// Whether the stream ended because the reader fell `EventFeed.defaultBuffer` events behind.
    public var overflowed: Bool { overflow.value.load(ordering: .relaxed) }

    /// Queues a heartbeat tick after the events queued so far.
    public func heartbeat() { feed.heartbeat(id) }

    /// The profiles the reader may see changed (an owner added or removed them).
    public func update(profiles: Set<String>) { feed.update(id, profiles: profiles) }

    /// Leaves the feed (also done when the reader's task ends or is cancelled).
    public func cancel() { feed.remove(id) }

    deinit { feed.remove(id) }
}
