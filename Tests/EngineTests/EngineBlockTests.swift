import ControlAPI
import ControlServer
import Enforcement
import Engine
import Helper
import ScrollOffCore
import Synchronization
import Testing

@Suite("Engine: blocks, entries and routing")
struct EngineBlockTests {
    @Test func block_instagram_blocks_www_with_ttl_at_most_10() async throws {
        let time = TestTimeSource(wall: Fixture.noon)
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), time)
        #expect(await engine.decision("www.instagram.com").blocked == false)

        let result = BlockResult(try await engine.block(["instagram"], reason: "sleep before exams"))
        #expect(result.entries.map(\.state) == ["blocked"])

        for name in ["www.instagram.com", "instagram.com", "I.INSTAGRAM.COM"] {
            let d = await engine.decision(name)
            #expect(d.blocked, "\(name)")
            #expect(d.managed)
            #expect(d.ttlCap <= 10)
        }
        #expect(await engine.decision("www.example.com").blocked == false)
        #expect(await engine.decision("www.example.com").managed == false)
    }

    @Test func unblock_inside_cooldown_is_refused_with_the_instant_it_opens() async throws {
        let time = TestTimeSource(wall: Fixture.noon)
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), time)
        _ = try await engine.block(["instagram"], reason: "exams")
        time.pass(.minutes(30))
        let r = await refusal { () async throws(EngineError) in try await engine.unblock(["instagram"]) }
        #expect(r?.rule == .cooldown)
        #expect(r?.opensAt == Fixture.noon + .hours(2)) // strict preset: 2 h
        #expect(r?.reason == "exams")
        #expect(await engine.decision("www.instagram.com").blocked)
        let refused = try await engine.events().map(EventReport.init).filter { $0.kind == "editRefused" }
        #expect(refused.count == 1)

        time.pass(.minutes(91))
        _ = try await engine.unblock(["instagram"])
        #expect(await engine.decision("www.instagram.com").blocked == false)
    }

    @Test func category_social_blocks_reddit_and_instagram_but_not_youtube() async throws {
        let time = TestTimeSource(wall: Fixture.noon)
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), time)
        let result = try await engine.block(["social"])
        #expect(result.entries.contains { $0.id == "reddit" })
        #expect(await engine.decision("www.reddit.com").blocked)
        #expect(await engine.decision("old.reddit.com").blocked)
        #expect(await engine.decision("www.instagram.com").blocked)
        #expect(await engine.decision("www.youtube.com").blocked == false)
    }

    @Test func custom_domain_block_covers_its_subdomains_only() async throws {
        let time = TestTimeSource(wall: Fixture.noon)
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), time)
        _ = try await engine.block(["News.Example.com."])
        #expect(await engine.decision("news.example.com").blocked)
        #expect(await engine.decision("live.news.example.com").blocked)
        #expect(await engine.decision("example.com").blocked == false)
        #expect(await engine.decision("othernews.example.com").blocked == false)
        let status = try await StatusReport(engine.status())
        #expect(status.entries.map(\.id) == ["news.example.com"])
    }

    @Test func an_unknown_word_is_not_found() async throws {
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), TestTimeSource(wall: Fixture.noon))
        await #expect(throws: EngineError.self) { _ = try await engine.block(["instagramm"]) }
    }

    @Test func always_allowed_extra_host_beats_a_block() async throws {
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), TestTimeSource(wall: Fixture.noon))
        _ = try await engine.block(["lists.example.org"])
        #expect(await engine.decision("lists.example.org").blocked == false)
        _ = try await engine.block(["example.org"])
        #expect(await engine.decision("www.example.org").blocked)
        #expect(await engine.decision("lists.example.org").blocked == false)
    }

    @Test(arguments: [
        ("10.1.2.3", "kids"),
        ("10.5.9.9", "teens"), // 10.5.0.0/16 is longer than 10.0.0.0/8
        ("192.168.1.5", "default"),
        ("fd00::7", "kids"),
        ("2001:db8::1", "default"),
        ("::ffff:10.1.2.3", "kids"),
    ])
    func client_is_routed_to_the_profile_of_its_longest_prefix(client: String, profile: String) async throws {
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), TestTimeSource(wall: Fixture.noon))
        _ = try await engine.addProfile("kids", clients: ["10.0.0.0/8", "fd00::/8"])
        _ = try await engine.addProfile("teens", clients: ["10.5.0.0/16"])
        _ = try await engine.block(["instagram"], profile: "kids")
        _ = try await engine.block(["tiktok"], profile: "teens")
        _ = try await engine.block(["reddit"])

        let d = await engine.decision("www.instagram.com", client: client)
        let names = engine.box.enforcement.profileNames
        #expect(names[d.profile] == profile)
        #expect(d.blocked == (profile == "kids"))
        #expect(await engine.decision("www.tiktok.com", client: client).blocked == (profile == "teens"))
        #expect(await engine.decision("www.reddit.com", client: client).blocked == (profile == "default"))
    }

    @Test func cidr_text_is_validated() {
        #expect(throws: ClientNetworkError.self) { try ClientNetwork(parsing: "10.0.0.0/33") }
        #expect(throws: ClientNetworkError.self) { try ClientNetwork(parsing: "10.0.0/8") }
        #expect(throws: ClientNetworkError.self) { try ClientNetwork(parsing: "fd00::1::2/8") }
        #expect((try? ClientNetwork(parsing: "fd00::/8"))?.prefixLength == 8)
        #expect((try? ClientNetwork(parsing: "192.168.1.1"))?.prefixLength == 32)
    }

    @Test func services_list_a_category_with_each_state() async throws {
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), TestTimeSource(wall: Fixture.noon))
        _ = try await engine.block(["reddit"])
        let social = try await engine.services(category: "social").map(ServiceReport.init)
        #expect(social.allSatisfy { $0.category == "social" })
        #expect(social.first { $0.id == "reddit" }?.state == "blocked")
        #expect(social.first { $0.id == "instagram" }?.state == "none")
        await #expect(throws: EngineError.self) { _ = try await engine.services(category: "doom") }
        #expect(try await engine.ledgerProblems().isEmpty)
    }

    @Test func every_publish_reaches_the_handler_with_the_blocking_entries() async throws {
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), TestTimeSource(wall: Fixture.noon))
        let seen = PublishLog()
        await engine.setPublishHandler { seen.append($0.blockingEntries(profile: 0, at: $0.snapshot.builtAt)) }
        _ = try await engine.block(["instagram", "tiktok"])
        #expect(seen.values.first == [])
        #expect(seen.values.last == ["instagram", "tiktok"])
    }
}

/// Collects what the publish handler saw.
final class PublishLog: Sendable {
    private let storage = Mutex<[[EntryID]]>([])
    func append(_ v: [EntryID]) { storage.withLock { $0.append(v) } }
    var values: [[EntryID]] { storage.withLock { $0 } }
}
