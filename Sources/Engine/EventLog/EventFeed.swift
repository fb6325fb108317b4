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
///
/// Each event is published once as a ``FeedEvent`` that all readers share, so its text for the
/// wire is made once however many read it (it was made per reader: with 100 readers, 55% of the
/// helper's CPU under an urge flood went to encoding the same events again; docs/benchmarks.md
/// "Urges and the event stream").
public final class EventFeed: Sendable {
    /// Commits' events one reader may hold unread (one item per commit: a batch of urges is one
    /// write to the reader, not 256); past this it is dropped (and told so).
    public static let defaultBuffer = 256

    public enum Item: Sendable {
        /// The events of one commit the reader may see, oldest first.
        case events([FeedEvent])
        /// A tick for the reader's heartbeat (`EventSubscription.heartbeat()`), in the same queue
        /// as the events so one loop writes both.
        case heartbeat
    }

    struct Reader {
        var profiles: Set<String>
        let continuation: AsyncStream<Item>.Continuation
        let overflow: OverflowFlag
        let queued: QueueCount
    }

    /// Set when the feed drops a reader for falling behind; shared with its `EventSubscription`.
    final class OverflowFlag: Sendable {
        let value = Atomic<Bool>(false)
    }

    /// Items queued for one reader and not yet taken (the metrics' queue depth).
    final class QueueCount: Sendable {
        let value = Atomic<Int>(0)
    }

    private struct State {
        var nextReader = 0
        var readers: [Int: Reader] = [:]
    }

    private let state = Mutex(State())
    private let buffer: Int
    private let droppedTotal = Atomic<Int>(0)
    private let sentTotal = Atomic<Int>(0)

    public init(buffer: Int = EventFeed.defaultBuffer) {
        self.buffer = max(1, buffer)
    }

    /// Readers dropped for falling behind since start (the metrics' counter).
    public var droppedReaders: Int { droppedTotal.load(ordering: .relaxed) }
    /// Readers following the feed now.
    public var readerCount: Int { state.withLock { $0.readers.count } }
    /// Events written to readers since start, as readers report them (`EventSubscription.sent`).
    public var sentEvents: Int { sentTotal.load(ordering: .relaxed) }
    /// The most items (commits' events, heartbeats) one reader has queued and not yet taken: how
    /// far behind the slowest reader is, out of `defaultBuffer` before it is let go.
    public var deepestQueue: Int { state.withLock { $0.readers.values.map { $0.queued.value.load(ordering: .relaxed) }.max() ?? 0 } }

    /// A new reader of the events of `profiles` and the machine-wide ones (no profile), as
    /// `scrolloff events` shows them; events committed from now on are queued for it.
    public func subscribe(profiles: Set<String>) -> EventSubscription {
        let (stream, continuation) = AsyncStream.makeStream(of: Item.self, bufferingPolicy: .bufferingOldest(buffer))
        let overflow = OverflowFlag()
        let queued = QueueCount()
        let id = state.withLock { state in
            let id = state.nextReader
            state.nextReader += 1
            state.readers[id] = Reader(profiles: profiles, continuation: continuation, overflow: overflow, queued: queued)
            return id
        }
        let subscription = EventSubscription(items: EventSubscription.Items(stream: stream, queued: queued), id: id, feed: self, overflow: overflow)
        continuation.onTermination = { [weak self] _ in self?.remove(id) }
        return subscription
    }

    /// Queues committed events (with their ids) for every reader that may see them. Never waits:
    /// a reader whose buffer is full is dropped instead.
    package func publish(_ events: [StoredEvent]) {
        guard !events.isEmpty else { return }
        let shared = events.map(FeedEvent.init)
        let dropped: [Reader] = state.withLock { state in
            var full: [Int] = []
            for (id, reader) in state.readers {
                // The commit's own array when the reader may see all of it (the usual case), not a copy per reader.
                let visible = shared.allSatisfy { Self.visible($0.event, to: reader.profiles) }
                    ? shared : shared.filter { Self.visible($0.event, to: reader.profiles) }
                guard !visible.isEmpty else { continue }
                reader.queued.value.add(1, ordering: .relaxed)
                if case .dropped = reader.continuation.yield(.events(visible)) {
                    reader.queued.value.subtract(1, ordering: .relaxed)
                    full.append(id)
                }
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
        state.withLock { state in
            guard let reader = state.readers[id] else { return }
            reader.queued.value.add(1, ordering: .relaxed)
            if case .dropped = reader.continuation.yield(.heartbeat) { reader.queued.value.subtract(1, ordering: .relaxed) }
        }
    }

    fileprivate func sent(_ count: Int) {
        sentTotal.add(count, ordering: .relaxed)
    }

    fileprivate func update(_ id: Int, profiles: Set<String>) {
        state.withLock { $0.readers[id]?.profiles = profiles }
    }

    fileprivate func remove(_ id: Int) {
        let reader = state.withLock { $0.readers.removeValue(forKey: id) }
        reader?.continuation.finish()
    }
}

/// One event as the feed hands it to every reader that may see it: the stored event, and its text
/// for the wire made once for all of them (`text(_:)`).
public final class FeedEvent: Sendable {
    public let event: StoredEvent
    private let rendered = Mutex<String?>(nil)

    init(_ event: StoredEvent) { self.event = event }

    /// `render(event)`, made by the first reader that asks and kept for the others. Every reader
    /// of the feed writes the same form (the event stream's SSE message), so one slot is enough.
    public func text(_ render: (StoredEvent) -> String) -> String {
        rendered.withLock { (text: inout String?) -> String in
            if let text { return text }
            let made = render(event)
            text = made
            return made
        }
    }
}

/// One reader of the `EventFeed`: its queue of events, and whether the feed dropped it.
public final class EventSubscription: Sendable {
    public let items: Items
    let id: Int
    let feed: EventFeed
    private let overflow: EventFeed.OverflowFlag

    /// The reader's queue: an `AsyncStream` whose taking is counted (`EventFeed.deepestQueue`).
    public struct Items: AsyncSequence, Sendable {
        public typealias Element = EventFeed.Item
        public typealias Failure = Never
        let stream: AsyncStream<EventFeed.Item>
        let queued: EventFeed.QueueCount

        public struct AsyncIterator: AsyncIteratorProtocol {
            public typealias Failure = Never
            var base: AsyncStream<EventFeed.Item>.AsyncIterator
            let queued: EventFeed.QueueCount

            public mutating func next() async -> EventFeed.Item? {
                let item = await base.next()
                if item != nil { queued.value.subtract(1, ordering: .relaxed) }
                return item
            }
        }

        public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: stream.makeAsyncIterator(), queued: queued) }
    }

    fileprivate init(items: Items, id: Int, feed: EventFeed, overflow: EventFeed.OverflowFlag) {
        self.items = items
        self.id = id
        self.feed = feed
        self.overflow = overflow
    }

    /// Whether the stream ended because the reader fell `EventFeed.defaultBuffer` events behind.
    public var overflowed: Bool { overflow.value.load(ordering: .relaxed) }

    /// Queues a heartbeat tick after the events queued so far.
    public func heartbeat() { feed.heartbeat(id) }

    /// The reader wrote `count` events to its client (the metrics' events sent).
    public func sent(_ count: Int) { feed.sent(count) }

    /// The profiles the reader may see changed (an owner added or removed them).
    public func update(profiles: Set<String>) { feed.update(id, profiles: profiles) }

    /// Leaves the feed (also done when the reader's task ends or is cancelled).
    public func cancel() { feed.remove(id) }

    deinit { feed.remove(id) }
}
