import ControlAPI
import Foundation
import ScrollOffCore
import Testing

extension ControlEndToEnd {
/// A CLI that forgives, through the real `scrolloff` binary and control server:
/// global options before the verb, did-you-mean for verbs, sub-verbs and entries, durations and
/// times as people type them, and help that names no number the configuration decides.
@Suite
struct ForgivingCLITests {
    /// Runs the CLI with exactly `arguments` (no `--socket` added at the end, unlike `cli`).
    static func exactly(_ arguments: [String]) async throws -> ProcessResult {
        try await run(scrolloffBinary, arguments, environment: ["PATH": "/usr/bin:/bin", "HOME": "/tmp", "NO_COLOR": "1", "TZ": "UTC"])
    }

    static func focusSeconds(_ result: ProcessResult) throws -> Int64 {
        let report = try decode(FocusReport.self, result.stdout)
        return (report.end.millisecondsSince1970 - report.start.millisecondsSince1970) / 1000
    }

    @Test func global_options_work_before_the_verb_as_after_it() async throws {
        let server = try await EngineServer()
        defer { Task { await server.stop() } }
        let s = server.socketPath
        for arguments in [
            ["--socket", s, "block", "instagram"],
            ["--json", "--socket", s, "block", "tiktok"],
            ["--socket=\(s)", "--profile", "default", "status"],
            ["--json", "schedule", "--socket", s, "list"],
            ["block", "youtube", "--socket", s],
        ] {
            let result = try await Self.exactly(arguments)
            #expect(result.status == 0, "\(arguments): \(result)")
            #expect(!result.stderr.contains("Unknown option"), "\(arguments): \(result)")
        }
        let json = try await Self.exactly(["--json", "--socket", s, "status"])
        #expect(json.status == 0, "\(json)")
        #expect(json.stdout.hasPrefix("{"), "--json before the verb gives JSON: \(json.stdout)")
        #expect(await server.blocks("instagram.com"))
        #expect(await server.blocks("tiktok.com"))
    }

    @Test func the_same_global_option_twice_with_different_values_says_which_to_keep() async throws {
        let result = try await Self.exactly(["--socket", "/tmp/soc-cli28-a.sock", "block", "instagram", "--socket", "/tmp/soc-cli28-b.sock"])
        #expect(result.status == 2, "\(result)")
        #expect(result.stderr.contains("--socket is given twice"), "\(result.stderr)")
        #expect(result.stderr.contains("/tmp/soc-cli28-a.sock") && result.stderr.contains("/tmp/soc-cli28-b.sock"))
        #expect(result.stderr.contains("keep the one you mean"))
        let profiles = try await Self.exactly(["--profile=kids", "status", "--profile", "default"])
        #expect(profiles.status == 2, "\(profiles)")
        #expect(profiles.stderr.contains("--profile is given twice"))
    }

    @Test func the_same_global_option_twice_with_the_same_value_is_not_a_conflict() async throws {
        let server = try await EngineServer()
        defer { Task { await server.stop() } }
        let result = try await Self.exactly(["--socket", server.socketPath, "status", "--socket", server.socketPath])
        #expect(result.status == 0, "\(result)")
    }

    @Test(arguments: [
        (["blokc", "instagram"], "did you mean `scrolloff block`?"),
        (["sttaus"], "did you mean `scrolloff status`?"),
        (["--json", "walet"], "did you mean `scrolloff wallet`?"),
        (["schedule", "ad", "x"], "did you mean `scrolloff schedule add`?"),
        (["lists", "updaet"], "did you mean `scrolloff lists update`?"),
        (["requests", "aprove", "3"], "did you mean `scrolloff requests approve`?"),
    ])
    func a_mistyped_verb_or_sub_verb_gets_the_nearest_one(arguments: [String], hint: String) async throws {
        let result = try await Self.exactly(arguments + ["--socket", "/tmp/soc-cli28-nowhere.sock"])
        #expect(result.status == 2, "\(result)")
        #expect(result.stderr.contains(hint), "\(result.stderr)")
    }

    @Test(arguments: [["xyzzyplugh"], ["schedule", "zzzzzz"], ["ü"], [String(repeating: "b", count: 10_000)]])
    func a_verb_far_from_every_verb_gets_no_suggestion(arguments: [String]) async throws {
        let result = try await Self.exactly(arguments)
        #expect(result.status == 2, "\(result)")
        #expect(!result.stderr.contains("did you mean"), "\(result.stderr)")
        #expect(result.stderr.contains("--help"), "\(result.stderr)")
    }

    @Test func a_mistyped_entry_or_service_gets_the_nearest_one_and_a_far_one_none() async throws {
        let server = try await EngineServer()
        defer { Task { await server.stop() } }
        let block = try await server.cli(["block", "instagarm"])
        #expect(block.status == 2, "\(block)")
        #expect(block.stderr.contains("Did you mean instagram?"), "\(block.stderr)")
        let category = try await server.cli(["block", "socail"])
        #expect(category.stderr.contains("Did you mean social?"), "\(category.stderr)")
        let peek = try await server.cli(["peek", "tiktk", "--skip-exercise"])
        #expect(peek.status == 2, "\(peek)")
        #expect(peek.stderr.contains("Did you mean tiktok?"), "\(peek.stderr)")
        let far = try await server.cli(["block", "qqqqqqqqqq"])
        #expect(far.status == 2, "\(far)")
        #expect(!far.stderr.contains("Did you mean"), "\(far.stderr)")
        let json = try await server.cli(["block", "instagarm", "--json"])
        #expect(try decode(ControlErrorEnvelope.self, json.stdout).error.message.contains("Did you mean instagram?"))
    }

    @Test(arguments: [
        (["10 minutes"], 600), (["10", "minutes"], 600), (["10min"], 600), (["1h30"], 5400), (["90s"], 90),
        (["1h"], 3600), (["45m"], 2700), (["2 hours"], 7200), (["1", "hour"], 3600),
    ] as [([String], Int64)])
    func focus_takes_durations_as_people_type_them(words: [String], seconds: Int64) async throws {
        let server = try await EngineServer()
        defer { Task { await server.stop() } }
        let result = try await server.cli(["focus"] + words + ["--entries", "youtube", "--json"])
        #expect(result.status == 0, "\(words): \(result)")
        #expect(try Self.focusSeconds(result) == seconds)
    }

    @Test(arguments: ["10 parsecs", "99999999999h", "", "1.5h", "0", "１０m", "1h90"])
    func a_refused_duration_says_the_accepted_forms(text: String) async throws {
        let result = try await Self.exactly(["focus", text, "--socket", "/tmp/soc-cli28-nowhere.sock"])
        #expect(result.status == 2, "\(result)")
        #expect(result.stderr.contains("write 90s, 10m, 1h30 or 2h"), "\(result.stderr)")
    }

    @Test func use_for_and_adjust_take_the_same_durations() async throws {
        let use = try await Self.exactly(["use", "instagram", "--for", "10 parsecs", "--socket", "/tmp/soc-cli28-nowhere.sock"])
        #expect(use.status == 2 && use.stderr.contains("write 90s, 10m, 1h30 or 2h"), "\(use)")
        // Reaches the (missing) helper: the length was understood.
        let understood = try await Self.exactly(["use", "instagram", "--for", "10", "minutes", "--socket", "/tmp/soc-cli28-nowhere.sock"])
        #expect(understood.status == 3, "\(understood)")
        let adjust = try await Self.exactly(["adjust", "+1h30", "--note", "chores", "--socket", "/tmp/soc-cli28-nowhere.sock"])
        #expect(adjust.status == 3, "\(adjust)")
        let badAdjust = try await Self.exactly(["adjust", "+10 parsecs", "--note", "chores", "--socket", "/tmp/soc-cli28-nowhere.sock"])
        #expect(badAdjust.status == 2 && badAdjust.stderr.contains("write 90s, 10m, 1h30 or 2h"), "\(badAdjust)")
    }

    @Test(arguments: [
        (["9pm", "7am"], "21:00", "07:00"), (["21:00", "07:00"], "21:00", "07:00"), (["9:30pm", "6:45am"], "21:30", "06:45"),
        (["9:30 pm", "12am"], "21:30", "00:00"), (["9 PM", "12pm"], "21:00", "12:00"),
    ] as [([String], String, String)])
    func schedule_takes_times_as_people_type_them(times: [String], from: String, to: String) async throws {
        let server = try await EngineServer()
        defer { Task { await server.stop() } }
        let answer = try await server.json(["schedule", "add", "evenings", "--from", times[0], "--to", times[1], "--entries", "instagram"])
        #expect(answer["from"] as? String == from, "\(answer)")
        #expect(answer["to"] as? String == to, "\(answer)")
        // Split by the shell into two words, it reads the same.
        let split = times[0].split(separator: " ").map(String.init)
        if split.count == 2 {
            let again = try await server.cli(["schedule", "add", "late", "--from"] + split + ["--to", times[1], "--entries", "tiktok"])
            #expect(again.status == 0, "\(again)")
        }
    }

    @Test(arguments: ["25:00", "13pm", "0am", "9 parsecs", "", "nine", "9", "99999999999pm", "９pm"])
    func a_refused_time_says_the_accepted_forms(text: String) async throws {
        let result = try await Self.exactly(["schedule", "add", "x", "--from", text, "--to", "07:00", "--entries", "instagram",
                                             "--socket", "/tmp/soc-cli28-nowhere.sock"])
        #expect(result.status == 2, "\(result)")
        #expect(result.stderr.contains("write 21:00, 9:30, 9pm or 9:30pm"), "\(result.stderr)")
    }

    @Test func token_and_peek_help_name_no_number_the_configuration_decides() async throws {
        let token = try await Self.exactly(["token", "--help"])
        #expect(token.status == 0)
        #expect(!token.stdout.contains("5 per month"), "\(token.stdout)")
        #expect(!token.stdout.contains("10 minutes"), "\(token.stdout)")
        #expect(token.stdout.contains("tokens_per_month") && token.stdout.contains("scrolloff status"), "\(token.stdout)")
        let peek = try await Self.exactly(["peek", "--help"])
        #expect(peek.status == 0)
        #expect(!peek.stdout.contains("60-second") && !peek.stdout.contains("two more"), "\(peek.stdout)")
        #expect(peek.stdout.contains("free_peeks_per_day") && peek.stdout.contains("scrolloff status"), "\(peek.stdout)")
    }
}
}
