import ControlAPI
import Foundation
import ScrollOffCore
import Testing

extension ControlEndToEnd {
/// `peek` and `token` on a real terminal (util-linux `script` gives the CLI a pty on both ends):
/// before a paid bypass the plan comes first and the exercise is offered; its outcome is
/// recorded through the API (SPEC §5 step 3, §8).
@Suite
struct ExerciseTerminalTests {
    /// Runs `scrolloff ARGS` on a pty, typing `input` into it.
    func onTerminal(_ server: EngineServer, _ arguments: [String], typing input: String) async throws -> ProcessResult {
        let command = ([scrolloffBinary] + arguments + ["--socket", server.socketPath]).joined(separator: " ")
        let shell = "printf '\(input)' | /usr/bin/script -qfec '\(command)' /dev/null"
        return try await run("/bin/sh", ["-c", shell], environment: ["PATH": "/usr/bin:/bin", "TERM": "xterm", "NO_COLOR": "1", "TZ": "UTC"])
    }

    func exerciseMessages(_ server: EngineServer) async throws -> [String] {
        let events = try await server.json(["events"])
        return (events["events"] as? [[String: Any]] ?? []).filter { $0["kind"] as? String == "exercise" }.compactMap { $0["message"] as? String }
    }

    @Test func a_free_peek_offers_no_exercise() async throws {
        let server = try await EngineServer()
        defer { Task { await server.stop() } }
        _ = try await server.cli(["block", "instagram"])
        let peek = try await onTerminal(server, ["peek", "instagram"], typing: "")
        #expect(peek.status == 0, "\(peek)")
        #expect(!peek.stdout.contains("try this first"))
        #expect(try await exerciseMessages(server).isEmpty)
    }

    @Test func a_paid_peek_shows_the_plan_then_offers_the_exercise_and_records_a_skip() async throws {
        let server = try await EngineServer()
        defer { Task { await server.stop() } }
        _ = try await server.cli(["block", "instagram"])
        _ = try await server.cli(["plan", "add", "--when", "I feel bored", "--then", "I will stretch"])
        #expect(try await server.cli(["peek", "instagram"]).status == 0) // the free one, not on a terminal
        server.time.shift(.minutes(3))

        let paid = try await onTerminal(server, ["peek", "instagram"], typing: "s\\n")
        #expect(paid.status == 0, "\(paid)")
        let plan = try #require(paid.stdout.range(of: "Your plan: when I feel bored, I will stretch."))
        let offer = try #require(paid.stdout.range(of: "try this first"))
        let opened = try #require(paid.stdout.range(of: "instagram is open until"))
        #expect(plan.lowerBound < offer.lowerBound && offer.lowerBound < opened.lowerBound, "\(paid.stdout)")
        #expect(paid.stdout.components(separatedBy: "Your plan:").count == 2, "the plan is shown once")
        #expect(try await exerciseMessages(server) == ["Exercise skipped this time."])
    }

    @Test func a_free_peek_on_a_terminal_shows_the_plan_once_before_it_opens() async throws {
        let server = try await EngineServer()
        defer { Task { await server.stop() } }
        _ = try await server.cli(["block", "instagram"])
        _ = try await server.cli(["plan", "add", "--when", "I feel bored", "--then", "I will stretch"])
        let peek = try await onTerminal(server, ["peek", "instagram"], typing: "")
        #expect(peek.status == 0, "\(peek)")
        let plan = try #require(peek.stdout.range(of: "Your plan: when I feel bored, I will stretch."))
        let opened = try #require(peek.stdout.range(of: "instagram is open until"))
        #expect(plan.lowerBound < opened.lowerBound, "\(peek.stdout)")
        #expect(peek.stdout.components(separatedBy: "Your plan:").count == 2, "the plan is shown once")
    }

    /// SPEC §8: the plan comes first, before the spend is asked for, so even a spend the wallet
    /// refuses shows it at the moment of the urge.
    @Test func a_spend_on_a_terminal_shows_the_plan_before_asking_even_when_refused() async throws {
        let server = try await EngineServer()
        defer { Task { await server.stop() } }
        _ = try await server.cli(["block", "instagram"])
        _ = try await server.cli(["plan", "add", "--when", "I feel bored", "--then", "I will stretch"])
        let first = try await onTerminal(server, ["use", "instagram"], typing: "")
        #expect(first.status == 0, "\(first)")
        #expect(first.stdout.components(separatedBy: "Your plan:").count == 2, "the plan is shown once: \(first.stdout)")
        // The 2 min of starter credit run out; the next spend is refused for want of credit.
        server.time.shift(.minutes(3))
        let refused = try await onTerminal(server, ["use", "instagram"], typing: "")
        #expect(refused.status == 1, "\(refused)")
        #expect(refused.stdout.contains("Your plan: when I feel bored, I will stretch."), "\(refused)")
    }

    @Test func skip_exercise_records_a_skip_without_asking() async throws {
        let server = try await EngineServer(preset: .flexible)
        defer { Task { await server.stop() } }
        _ = try await server.cli(["block", "instagram"])
        let token = try await onTerminal(server, ["token", "instagram", "--skip-exercise"], typing: "")
        #expect(token.status == 0, "\(token)")
        #expect(!token.stdout.contains("try this first"))
        #expect(token.stdout.contains("instagram is open until"))
        #expect(try await exerciseMessages(server) == ["Exercise skipped this time."])
    }
}
}
