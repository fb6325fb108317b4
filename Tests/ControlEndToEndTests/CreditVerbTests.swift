import ControlAPI
import Foundation
import ScrollOffCore
import Testing

extension ControlEndToEnd {
/// `wallet`, `use`, `stop`, `peek` and `token` through the real CLI, control server and engine.
/// The strict preset's starter credit is 2 min (SPEC §4); peeks are 1 free then 2 at 60 s each,
/// with a lockout of twice the peek length after each (SPEC §5).
@Suite
struct CreditVerbTests {
    static func balance(_ server: EngineServer) async throws -> Int {
        try #require(try await server.json(["wallet"])["balance_seconds"] as? Int)
    }

    @Test func use_for_two_minutes_spends_per_second_and_stop_ends_it() async throws {
        let server = try await EngineServer()
        defer { Task { await server.stop() } }
        _ = try await server.cli(["block", "instagram"])
        #expect(try await Self.balance(server) == 120)

        let use = try await server.cli(["use", "instagram", "--for", "2m", "--task", "reply to Sam"])
        #expect(use.status == 0, "\(use)")
        #expect(use.stdout.contains("instagram is open until 12:02 — 2 min · task “reply to Sam”"), "\(use.stdout)")
        #expect(await server.blocks("www.instagram.com") == false)

        server.time.shift(.seconds(30))
        let during = try await Self.balance(server)
        #expect((88...90).contains(during), "30 s of spending, give or take the real time the CLI took: \(during)")

        let stop = try await server.cli(["stop"])
        #expect(stop.status == 0, "\(stop)")
        #expect(stop.stdout.contains("Stopped spending on instagram after 30 s; nothing more is charged."), "\(stop.stdout)")
        #expect(await server.blocks("www.instagram.com"))
        let stopped = try await Self.balance(server)
        server.time.shift(.seconds(30))
        #expect(try await Self.balance(server) == stopped, "nothing more is deducted after stop")

        let nothing = try await server.cli(["stop"])
        #expect(nothing.status == 1, "\(nothing)")
    }

    /// SPEC §4: `use` during a running paid peek charged the peek's 60 s and then `spend` for the
    /// same minute; `stop` ended a free peek though its help says it closes what `use` opened.
    @Test func use_during_a_running_peek_is_refused_with_its_end_and_stop_leaves_the_peek_alone() async throws {
        let server = try await EngineServer()
        defer { Task { await server.stop() } }
        _ = try await server.cli(["block", "instagram"])
        #expect(try await server.cli(["peek", "instagram"]).status == 0) // free
        server.time.shift(.minutes(3))
        #expect(try await server.cli(["peek", "instagram"]).status == 0) // paid: −60 s
        #expect(try await Self.balance(server) == 60)

        server.time.shift(.seconds(10))
        let use = try await server.cli(["use", "instagram", "--json"])
        #expect(use.status == 1, "\(use)")
        let error = try decode(ControlErrorEnvelope.self, use.stdout).error
        #expect(error.rule == "grant_running")
        // The paid peek opened at 12:03 plus the real time the CLI took; the wire rounds up to the second.
        let opensAt = try #require(error.opensAt.map(Instant.init(date:)))
        #expect(opensAt >= EngineServer.noon + .minutes(4) && opensAt <= EngineServer.noon + .minutes(4) + .seconds(3), "\(opensAt)")
        let words = try await server.cli(["use", "instagram"])
        #expect(words.stderr.contains("instagram is already open until 12:04"), "\(words.stderr)")
        #expect(words.stderr.contains("Nothing was charged"), "\(words.stderr)")

        let stop = try await server.cli(["stop", "instagram", "--json"])
        #expect(stop.status == 1, "\(stop)")
        #expect(try decode(ControlErrorEnvelope.self, stop.stdout).error.rule == "grant_running")
        #expect(await server.blocks("www.instagram.com") == false, "the peek still runs")

        server.time.shift(.minutes(1))
        #expect(try await Self.balance(server) == 60, "only the paid peek was charged")
        #expect(await server.blocks("www.instagram.com"))
        let ledger = try await server.json(["wallet"])
        #expect(ledger["spent_today_seconds"] as? Int == 60, "\(ledger)")
    }

    @Test func peek_ladder_free_then_paid_then_used_up() async throws {
        let server = try await EngineServer()
        defer { Task { await server.stop() } }
        _ = try await server.cli(["block", "instagram"])

        let free = try await server.cli(["peek", "instagram", "--json"])
        #expect(free.status == 0, "\(free)")
        let freeResult = try decode(GrantResult.self, free.stdout)
        #expect(freeResult.grant.kind == "peek")
        #expect(freeResult.balanceSeconds == 120)
        #expect(freeResult.peeksLeftToday == 2)

        // Inside the lockout (twice the 60 s peek) nothing opens it again.
        let locked = try await server.cli(["peek", "instagram", "--json"])
        #expect(locked.status == 1, "\(locked)")
        #expect(try decode(ControlErrorEnvelope.self, locked.stdout).error.rule == "bypass_lockout")

        server.time.shift(.minutes(3))
        let paid = try await server.cli(["peek", "instagram"])
        #expect(paid.status == 0, "\(paid)")
        #expect(paid.stdout.contains("1 peek left today"), "\(paid.stdout)")
        #expect(try await Self.balance(server) == 60)

        server.time.shift(.minutes(3))
        #expect(try await server.cli(["peek", "instagram"]).status == 0)
        #expect(try await Self.balance(server) == 0)

        server.time.shift(.minutes(3))
        let used = try await server.cli(["peek", "instagram", "--json"])
        #expect(used.status == 1, "\(used)")
        #expect(try decode(ControlErrorEnvelope.self, used.stdout).error.rule == "peeks_used_up")

        #expect(used.stderr.isEmpty)
        let usedWords = try await server.cli(["peek", "instagram"])
        #expect(usedWords.stderr.contains("Peeks come back at Thu 00:00 — 11 h"), "\(usedWords.stderr)")

        // The strict preset includes no emergency tokens (SPEC §6).
        let token = try await server.cli(["token", "instagram", "--json"])
        #expect(token.status == 1, "\(token)")
        #expect(try decode(ControlErrorEnvelope.self, token.stdout).error.rule == "tokens_used_up")
    }

    @Test func a_token_opens_for_ten_minutes_with_its_task() async throws {
        // The flexible preset includes 3 tokens a month (SPEC §6).
        let server = try await EngineServer(preset: .flexible)
        defer { Task { await server.stop() } }
        _ = try await server.cli(["block", "instagram"])
        let token = try await server.cli(["token", "instagram", "--task", "check the event time"])
        #expect(token.status == 0, "\(token)")
        #expect(token.stdout.contains("instagram is open until 12:10 — 10 min · task “check the event time”"), "\(token.stdout)")
        #expect(token.stdout.contains("2 tokens left this month"), "\(token.stdout)")
        #expect(await server.blocks("www.instagram.com") == false)
        server.time.shift(.minutes(11))
        #expect(await server.blocks("www.instagram.com"))
    }

    @Test func without_a_terminal_the_exercise_is_never_offered_or_recorded() async throws {
        let server = try await EngineServer(preset: .flexible)
        defer { Task { await server.stop() } }
        _ = try await server.cli(["block", "instagram"])
        let token = try await server.cli(["token", "instagram"])
        #expect(token.status == 0, "\(token)")
        #expect(!token.stdout.contains("try this first"))
        let events = try await server.json(["events"])
        let kinds = (events["events"] as? [[String: Any]] ?? []).compactMap { $0["kind"] as? String }
        #expect(!kinds.contains { $0.lowercased().contains("exercise") }, "\(kinds)")
    }

    @Test func exercise_outcome_is_recorded_through_the_api() async throws {
        let server = try await EngineServer()
        defer { Task { await server.stop() } }
        _ = try await server.cli(["block", "instagram"])
        let body = #"{"exercise":"breath","entry":"instagram","outcome":"bypassAvoided"}"#
        let recorded = try await curl(server.socketPath, "POST", "/v1/exercises", body: body)
        #expect(recorded.status == 201, "\(recorded.body)")
        let unknown = try await curl(server.socketPath, "POST", "/v1/exercises",
                                     body: #"{"exercise":"juggling","entry":"instagram","outcome":"completed"}"#)
        #expect(unknown.status == 404)
        let badOutcome = try await curl(server.socketPath, "POST", "/v1/exercises",
                                        body: #"{"exercise":"breath","entry":"instagram","outcome":"maybe"}"#)
        #expect(badOutcome.status == 400)
        let events = try await server.json(["events"])
        let kinds = (events["events"] as? [[String: Any]] ?? []).compactMap { $0["kind"] as? String }
        #expect(kinds.contains { $0.lowercased().contains("exercise") }, "\(kinds)")
    }
}
}
