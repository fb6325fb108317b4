import ControlAPI
import Foundation
import ScrollOffCore
import Testing

extension ControlEndToEnd {
/// `block`, `unblock`, `status`, `schedule` and `focus` through the real CLI and control server
/// over the real engine, with the engine's clock standing at chosen instants.
@Suite
struct RuleVerbTests {
    @Test func blocking_shows_in_status_and_unblocking_is_refused_during_the_cooldown() async throws {
        let server = try await EngineServer()
        defer { Task { await server.stop() } }

        let blocked = try await server.cli(["block", "instagram", "--reason", "evenings are for reading"])
        #expect(blocked.status == 0, "\(blocked)")
        #expect(blocked.stdout.contains("Blocked instagram"))

        let status = try await server.json(["status"])
        let entries = try #require(status["entries"] as? [[String: Any]])
        let instagram = try #require(entries.first { $0["id"] as? String == "instagram" })
        #expect(instagram["state"] as? String == "blocked")
        // Strict preset: a 2 h cooldown from the block, a few milliseconds after noon on the
        // engine's running clock; the wire rounds it up to the whole second, never down.
        let lockedText = try #require(instagram["locked_until"] as? String)
        #expect(["2026-11-18T14:00:00Z", "2026-11-18T14:00:01Z"].contains(lockedText), "\(lockedText)")

        let refused = try await server.cli(["unblock", "instagram"])
        #expect(refused.status == 1, "\(refused)")
        #expect(refused.stderr.contains("instagram is in cooldown until 14:00 — 2 h"), "\(refused.stderr)")
        #expect(refused.stderr.contains("Your reason: “evenings are for reading”"))

        let refusedJSON = try await server.cli(["unblock", "instagram", "--json"])
        #expect(refusedJSON.status == 1)
        let error = try decode(ControlErrorEnvelope.self, refusedJSON.stdout).error
        #expect(error.rule == "cooldown")
        let opensAt = try #require(error.opensAt.map(Instant.init(date:)))
        #expect(opensAt >= EngineServer.noon + .hours(2) && opensAt <= EngineServer.noon + .hours(2) + .seconds(1))
        #expect(opensAt.millisecondsSince1970 % 1000 == 0, "opens_at is a whole second")
        #expect(error.reason == "evenings are for reading")

        server.time.shift(.hours(2) + .minutes(1))
        let unblocked = try await server.cli(["unblock", "instagram"])
        #expect(unblocked.status == 0, "\(unblocked)")
        let after = try await server.json(["status"])
        #expect((after["entries"] as? [[String: Any]])?.isEmpty == true)
    }

    @Test func a_curfew_is_locked_while_it_runs_and_nothing_opens_it() async throws {
        let server = try await EngineServer()
        defer { Task { await server.stop() } }

        let added = try await server.cli(["schedule", "add", "afternoon", "--from", "13:00", "--to", "15:00", "--curfew",
                                          "--entries", "tiktok", "--reason", "homework first"])
        #expect(added.status == 0, "\(added)")
        #expect(added.stdout.contains("curfew 13:00–15:00"))
        let list = try await server.json(["schedule", "list"])
        let schedules = try #require(list["schedules"] as? [[String: Any]])
        #expect(schedules.map { $0["name"] as? String } == ["afternoon"])

        // 13:30: inside the curfew. The edit lock runs to its end at 15:00.
        server.time.shift(.minutes(90))
        let status = try await server.json(["status"])
        let tiktok = try #require((status["entries"] as? [[String: Any]])?.first { $0["id"] as? String == "tiktok" })
        #expect(tiktok["state"] as? String == "curfew")

        let removal = try await server.cli(["schedule", "rm", "afternoon"])
        #expect(removal.status == 1, "\(removal)")
        #expect(removal.stderr.contains("The curfew “afternoon” is locked until 15:00 — 1 h 30 min"), "\(removal.stderr)")
        #expect(removal.stderr.contains("Your reason: “homework first”"))

        let use = try await server.cli(["use", "tiktok", "--for", "5m", "--json"])
        #expect(use.status == 1, "\(use)")
        #expect(try decode(ControlErrorEnvelope.self, use.stdout).error.rule == "curfew")
        let token = try await server.cli(["token", "tiktok"])
        #expect(token.status == 1)
        #expect(token.stderr.contains("tiktok is in curfew until 15:00"), "\(token.stderr)")

        // 15:05: the curfew is over and its cooldown (2 h from noon) too.
        server.time.shift(.minutes(95))
        let removed = try await server.cli(["schedule", "rm", "afternoon"])
        #expect(removed.status == 0, "\(removed)")
        #expect((try await server.json(["schedule", "list"])["schedules"] as? [Any])?.isEmpty == true)
    }

    @Test func focus_blocks_the_named_entries_until_it_ends() async throws {
        let server = try await EngineServer()
        defer { Task { await server.stop() } }
        let focus = try await server.cli(["focus", "1h30m", "--entries", "youtube"])
        #expect(focus.status == 0, "\(focus)")
        #expect(focus.stdout.contains("Focus until 13:30 — 1 h 30 min"), "\(focus.stdout)")
        #expect(await server.blocks("www.youtube.com"))
        server.time.shift(.minutes(91))
        #expect(await server.blocks("www.youtube.com") == false)
    }

    @Test func services_lists_the_catalog_with_states() async throws {
        let server = try await EngineServer()
        defer { Task { await server.stop() } }
        _ = try await server.cli(["block", "instagram"])
        let services = try await server.json(["services", "--category", "social"])
        let rows = try #require(services["services"] as? [[String: Any]])
        #expect(rows.contains { $0["id"] as? String == "instagram" && $0["state"] as? String == "blocked" })
        #expect(rows.allSatisfy { $0["category"] as? String == "social" })
        let unknown = try await server.cli(["services", "--category", "knitting"])
        #expect(unknown.status == 2, "\(unknown)")
    }
}
}
