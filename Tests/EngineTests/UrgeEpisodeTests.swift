import ControlAPI
import ControlServer
import Enforcement
import Engine
import Helper
import ScrollOffCore
import Testing

/// SPEC §7: an urge is one episode per entry, per client, per 60 s, and only for an entry that
/// blocks for the client's profile.
@Suite("Engine: urge episodes")
struct UrgeEpisodeTests {
    /// Records one blocked query with the enforcement it was decided with.
    static func query(_ engine: HelperEngine, _ name: String, client: UInt32, at now: Instant) async {
        let d = await engine.decision(name)
        #expect(d.blocked && d.managed, "\(name) should be blocked")
        engine.recordUrge(d, enforcement: engine.box.enforcement, client: .v4(client), now: now)
    }

    /// An engine with tiktok blocked, and `record(client, seconds)`: a www.tiktok.com query from
    /// `client` that many seconds past noon, recorded with the enforcement it was decided with.
    static func tiktokBlocked() async throws -> (engine: HelperEngine, record: (ClientIP, Int64) -> Void) {
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), TestTimeSource(wall: Fixture.noon))
        _ = try await engine.block(["tiktok"])
        let d = await engine.decision("www.tiktok.com")
        let enforcement = engine.box.enforcement
        return (engine, { client, seconds in
            engine.recordUrge(d, enforcement: enforcement, client: client, now: Fixture.noon + .seconds(seconds))
        })
    }

    @Test func a_name_two_entries_list_counts_an_urge_only_for_the_entry_that_blocks() async throws {
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), TestTimeSource(wall: Fixture.noon))
        // The custom domain blocks; the instagram service, which lists the same name, does not.
        _ = try await engine.block(["www.instagram.com"])
        await Self.query(engine, "www.instagram.com", client: 0x0A00_0001, at: Fixture.noon)
        let urges = try await engine.events().map(EventReport.init).filter { $0.kind == "urge" }
        #expect(urges.compactMap(\.entry) == ["www.instagram.com"])
    }

    @Test func two_names_of_one_entry_within_60_s_are_one_episode_for_that_entry() async throws {
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), TestTimeSource(wall: Fixture.noon))
        _ = try await engine.block(["instagram", "www.instagram.com"])
        // www.instagram.com is in both entries' sets; instagram.com only in instagram's.
        await Self.query(engine, "www.instagram.com", client: 0x0A00_0001, at: Fixture.noon)
        await Self.query(engine, "instagram.com", client: 0x0A00_0001, at: Fixture.noon + .seconds(10))
        let urges = try await engine.events().map(EventReport.init).filter { $0.kind == "urge" }
        #expect(urges.compactMap(\.entry).sorted() == ["instagram", "www.instagram.com"])
    }

    @Test func a_flood_of_clients_is_bounded_and_ended_episodes_make_room_again() async throws {
        let (engine, record) = try await Self.tiktokBlocked()
        let limit = UrgeRecorder.maximumTracked
        for client in 0..<UInt32(limit + 10) {
            record(.v4(0x0A00_0000 + client), 0)
        }
        #expect(engine.urges.droppedCount == 10)
        // A minute later the old episodes are over: a new client is counted again.
        record(.v4(0x0B00_0001), 61)
        #expect(engine.urges.droppedCount == 10)
        let urges = try await engine.events().map(EventReport.init).filter { $0.kind == "urge" }
        #expect(urges.count == limit + 1)
    }

    @Test func a_clients_repeats_stay_one_episode_while_another_client_queries_in_between() async throws {
        let (engine, record) = try await Self.tiktokBlocked()
        let a = ClientIP.v4(0x0A00_0001)
        let b = ClientIP.v4(0x0A00_0002)
        // a's repeats at 10 and 20 s, after b's query and after its own, are within its episode;
        // at 61 s its episode is over, and 62 s is within the new one.
        for (client, second) in [(a, 0), (b, 5), (a, 10), (a, 20), (b, 30), (a, 61), (a, 62)] {
            record(client, Int64(second))
        }
        let urges = try await engine.events().map(EventReport.init).filter { $0.kind == "urge" }
        #expect(urges.map(\.time).sorted() == [0, 5, 61].map { Fixture.noon + .seconds($0) })
    }

    @Test func an_episode_swept_out_by_a_batch_that_ends_earlier_is_counted_again() async throws {
        let (engine, record) = try await Self.tiktokBlocked()
        let a = ClientIP.v4(0x0A00_0001)
        // Event loops pass their own readings of the clock, so b's urge at 0 s can arrive after a's
        // at 100 s. The batch then ends at 0 s, and the sweep as of then drops a's episode, which
        // has not started yet at that instant: a's next query is a new episode, though a repeated
        // within its old one just before the sweep.
        record(a, 100)
        record(.v4(0x0A00_0002), 0)
        record(a, 105)
        #expect(try await engine.events().map(EventReport.init).filter { $0.kind == "urge" }.count == 2)
        record(a, 110)
        let urges = try await engine.events().map(EventReport.init).filter { $0.kind == "urge" }
        #expect(urges.map(\.time).sorted() == [0, 100, 110].map { Fixture.noon + .seconds($0) })
    }
}
