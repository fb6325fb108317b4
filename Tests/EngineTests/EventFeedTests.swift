import Enforcement
import Engine
import ScrollOffCore
import Store
import Testing

/// The live feed of committed events (`EventFeed`, SPEC §12): every event with its row id, in
/// commit order, only to readers that may see it, and a reader that falls behind is let go with a
/// flag saying so instead of holding up the engine.
@Suite("Engine: the live event feed")
struct EventFeedTests {
    static func event(_ id: Int64, profile: String?) -> StoredEvent {
        StoredEvent(id: id, profile: profile, time: Fixture.noon, kind: "test", message: "event \(id)")
    }

    @Test func every_committed_event_reaches_a_reader_with_its_row_id_in_commit_order() async throws {
        let time = TestTimeSource(wall: Fixture.noon)
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), time)
        let before = try await engine.latestEventID()
        let reader = engine.eventFeed.subscribe(profiles: ["default"])
        _ = try await engine.block(["instagram"], reason: nil)
        _ = try await engine.block(["tiktok"], reason: nil)
        let stored = try await engine.events(after: before, profiles: ["default"], limit: 100)
        #expect(stored.count >= 2, "\(stored)")
        var iterator = reader.items.makeAsyncIterator()
        var got: [StoredEvent] = []
        while got.count < stored.count {
            guard case .events(let es)? = await iterator.next() else { break }
            got += es.map(\.event)
        }
        #expect(got == stored, "the feed's events are the log's rows, ids included")
        #expect(got.compactMap(\.id) == got.compactMap(\.id).sorted() && Set(got.compactMap(\.id)).count == got.count)
        #expect(try await engine.latestEventID() == stored.last?.id)
    }

    @Test func a_reader_that_falls_behind_is_dropped_and_flagged_while_one_that_keeps_up_gets_every_event() async throws {
        let feed = EventFeed(buffer: 8)
        let slow = feed.subscribe(profiles: ["kid"])
        let fast = feed.subscribe(profiles: ["kid"])
        var fastEvents = fast.items.makeAsyncIterator()
        var fastGot: [Int64] = []
        for id in Int64(1)...40 {
            feed.publish([Self.event(id, profile: "kid")])
            if case .events(let es)? = await fastEvents.next() { fastGot += es.map { $0.event.id ?? -1 } }
        }
        #expect(fastGot == Array(1...40))
        #expect(!fast.overflowed)
        // The slow reader holds what fitted, then its stream ends, flagged.
        var slowGot: [Int64] = []
        for await item in slow.items { if case .events(let es) = item { slowGot += es.map { $0.event.id ?? -1 } } }
        #expect(slowGot == Array(1...8))
        #expect(slow.overflowed)
        #expect(feed.droppedReaders == 1 && feed.readerCount == 1)
    }

    @Test func publishing_never_waits_for_readers_that_do_not_read() async throws {
        let feed = EventFeed()
        let readers = (0..<100).map { _ in feed.subscribe(profiles: ["kid"]) }
        let clock = ContinuousClock()
        let took = clock.measure {
            for id in Int64(1)...10_000 { feed.publish([Self.event(id, profile: "kid")]) }
        }
        // 100 readers × 10,000 events; each reader is let go at its 257th, so this is mostly a dictionary scan.
        #expect(took < .seconds(2), "\(took)")
        #expect(readers.allSatisfy(\.overflowed) && feed.droppedReaders == 100 && feed.readerCount == 0)
    }

    @Test func a_reader_gets_only_its_profiles_events_and_the_machine_wide_ones() async throws {
        let feed = EventFeed()
        let member = feed.subscribe(profiles: ["kid"])
        feed.publish([Self.event(1, profile: "default"), Self.event(2, profile: "kid"), Self.event(3, profile: nil),
                      Self.event(4, profile: "guests")])
        member.cancel()
        var got: [Int64] = []
        for await item in member.items { if case .events(let es) = item { got += es.map { $0.event.id ?? -1 } } }
        #expect(got == [2, 3])
        #expect(feed.readerCount == 0)
    }

    @Test func an_event_is_rendered_once_however_many_readers_write_it() async throws {
        let feed = EventFeed()
        let readers = (0..<100).map { _ in feed.subscribe(profiles: ["kid"]) }
        feed.publish([Self.event(1, profile: "kid"), Self.event(2, profile: "kid")])
        var renders = 0
        var texts: Set<String> = []
        for reader in readers {
            var iterator = reader.items.makeAsyncIterator()
            guard case .events(let es)? = await iterator.next() else { Issue.record("no events"); return }
            for shared in es {
                texts.insert(shared.text { event in
                    renders += 1
                    return "id: \(event.id ?? -1)"
                })
            }
        }
        #expect(renders == 2, "each event's text made once for 100 readers")
        #expect(texts == ["id: 1", "id: 2"])
    }

    @Test func the_feed_counts_readers_events_sent_the_deepest_queue_and_readers_let_go() async throws {
        let feed = EventFeed(buffer: 4)
        let keeping = feed.subscribe(profiles: ["kid"])
        let lagging = feed.subscribe(profiles: ["kid"])
        #expect(feed.readerCount == 2 && feed.deepestQueue == 0 && feed.sentEvents == 0 && feed.droppedReaders == 0)
        var iterator = keeping.items.makeAsyncIterator()
        for id in Int64(1)...3 {
            feed.publish([Self.event(id, profile: "kid")])
            guard case .events(let es)? = await iterator.next() else { Issue.record("no events"); return }
            keeping.sent(es.count)
        }
        // The lagging reader holds three commits it has not taken; the other took each at once.
        #expect(feed.deepestQueue == 3 && feed.sentEvents == 3)
        var laggingIterator = lagging.items.makeAsyncIterator()
        _ = await laggingIterator.next()
        #expect(feed.deepestQueue == 2)
        // Two more fill the lagging reader's four; the third lets it go.
        for id in Int64(4)...6 {
            feed.publish([Self.event(id, profile: "kid")])
            guard case .events(let es)? = await iterator.next() else { Issue.record("no events"); return }
            keeping.sent(es.count)
        }
        #expect(feed.droppedReaders == 1 && feed.readerCount == 1 && lagging.overflowed)
        #expect(feed.deepestQueue == 0 && feed.sentEvents == 6, "the reader let go no longer counts; the other took everything")
    }

    /// SPEC §12: an urge reaches a live reader within a second, with its row id; a flood of new
    /// episodes is written a batch at a time (`UrgeRecorder.flushDelay`), not a commit, a
    /// snapshot rebuild and a write to every reader per blocked query.
    @Test(.timeLimit(.minutes(1)))
    func a_second_of_new_urges_reaches_a_reader_within_a_second_in_a_few_commits() async throws {
        let time = TestTimeSource(wall: Fixture.noon, followsRealTime: true)
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), time)
        _ = try await engine.block(["instagram"])
        let loop = Task { try await engine.run() }
        defer { loop.cancel() }
        try await Task.sleep(for: .milliseconds(100)) // the loop is asleep until the next award, an hour away
        let reader = engine.eventFeed.subscribe(profiles: ["default"])
        let decision = await engine.decision("www.instagram.com")
        #expect(decision.blocked && decision.managed)
        let clock = ContinuousClock()
        let count = 40
        // One blocked query every 25 ms, each from a client of its own (a new episode each), as
        // the DNS path records them.
        let recorder = Task { () -> [String: ContinuousClock.Instant] in
            var asked: [String: ContinuousClock.Instant] = [:]
            for i in 0..<count {
                let client = "10.0.1.\(i + 1)"
                asked[client] = clock.now
                engine.recordUrge(decision, enforcement: engine.box.enforcement, client: ClientIP(client) ?? .unknown,
                                  now: await engine.trustedNow())
                try? await Task.sleep(for: .milliseconds(25))
            }
            return asked
        }
        let giveUp = Task {
            try? await Task.sleep(for: .seconds(10))
            reader.cancel()
        }
        defer { giveUp.cancel() }
        var arrived: [String: ContinuousClock.Instant] = [:]
        var commits = 0
        for await item in reader.items {
            guard case .events(let events) = item else { continue }
            let urges = events.filter { $0.event.kind == .urge }
            if !urges.isEmpty { commits += 1 }
            for urge in urges { arrived[urge.event.clientIP ?? "?"] = clock.now }
            if arrived.count >= count { break }
        }
        let asked = await recorder.value
        #expect(arrived.count == count, "urges that reached the reader: \(arrived.count) of \(count)")
        let delays = asked.compactMap { client, at in arrived[client].map { $0 - at } }
        // Half within a second, none past 5 s: beside the whole unit suite on 2 cores the slowest
        // once took 1.8 s (the pool's queue, not the batch); the second itself is held end to end
        // by EventStreamEndToEndTests against the real helper.
        let sorted = delays.sorted()
        #expect(sorted.count == count && sorted[count / 2] < .seconds(1) && sorted[count - 1] < .seconds(5),
                "median \(sorted.isEmpty ? .zero : sorted[sorted.count / 2]), slowest \(sorted.last ?? .zero)")
        // A second of urges is 4 batches of 250 ms; a slow machine may split one more.
        #expect(commits <= 8, "\(count) urges over a second were written in \(commits) commits")
    }
}
