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
            got += es
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
            if case .events(let es)? = await fastEvents.next() { fastGot += es.map { $0.id ?? -1 } }
        }
        #expect(fastGot == Array(1...40))
        #expect(!fast.overflowed)
        // The slow reader holds what fitted, then its stream ends, flagged.
        var slowGot: [Int64] = []
        for await item in slow.items { if case .events(let es) = item { slowGot += es.map { $0.id ?? -1 } } }
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
        for await item in member.items { if case .events(let es) = item { got += es.map { $0.id ?? -1 } } }
        #expect(got == [2, 3])
        #expect(feed.readerCount == 0)
    }
}
