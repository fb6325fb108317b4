import ControlServer
import Foundation
import ListFetch
import ScrollOffCore
import Testing

extension ControlEndToEnd {
/// Every word true: what the CLI says is what happens, and it offers what works.
@Suite
struct TrueWordsVerbTests {
    /// A list added blocks nothing until its name is blocked; the CLI says so and offers
    /// `--block`, which blocks it and says that instead.
    @Test func lists_add_says_the_list_blocks_nothing_yet_and_block_blocks_it() async throws {
        let server = try await EngineServer()
        defer { Task { await server.stop() } }
        let file = server.directory + "/family.txt"
        try "0.0.0.0 one.example\n0.0.0.0 two.example\n".write(toFile: file, atomically: true, encoding: .utf8)
        let added = try await server.cli(["lists", "add", "file://" + file, "--name", "family"])
        #expect(added.status == 0, "\(added)")
        #expect(added.stdout.contains("blocks nothing until") && added.stdout.contains("scrolloff block family"), "\(added.stdout)")
        #expect(!(await server.blocks("one.example")))

        let other = server.directory + "/games.txt"
        try "0.0.0.0 three.example\n".write(toFile: other, atomically: true, encoding: .utf8)
        let blocked = try await server.cli(["lists", "add", "file://" + other, "--name", "games", "--block"])
        #expect(blocked.status == 0, "\(blocked)")
        #expect(blocked.stdout.contains("Blocked games"), "\(blocked.stdout)")
        #expect(!blocked.stdout.contains("blocks nothing"), "\(blocked.stdout)")
        #expect(await server.blocks("three.example"))
    }

    /// An owner's `scrolloff requests` shows the requests waiting for them in the profiles
    /// they may answer, without `--all`.
    @Test func an_owners_requests_lists_what_waits_for_their_answer_by_default() async throws {
        let server = try await EngineServer(socketMode: 0o666, directoryMode: 0o755)
        defer { Task { await server.stop() } }
        try await HouseholdVerbTests.household(server)
        let asked = try await HouseholdVerbTests.cli(as: 40002, ["ask", "15m", "--note", "homework research", "--profile", "kids"], server)
        #expect(asked.status == 0, "\(asked)")
        let listed = try await HouseholdVerbTests.cli(as: 40001, ["requests"], server)
        #expect(listed.status == 0, "\(listed)")
        #expect(listed.stdout.contains("homework research") && listed.stdout.contains("1 request waits for your answer"), "\(listed.stdout)")
        // Root, who may answer every profile, sees it too.
        let root = try await server.cli(["requests"])
        #expect(root.stdout.contains("homework research"), "\(root.stdout)")
    }

    /// `focus --help` says what a focus session allows.
    @Test func focus_help_says_what_a_focus_session_allows() async throws {
        let server = try await EngineServer()
        defer { Task { await server.stop() } }
        let help = try await server.cli(["focus", "--help"])
        // As one line: the help is wrapped to the terminal's width.
        let text = help.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(text.contains("cannot be ended early") && text.contains("peeks"), "\(help.stdout)")
    }

    /// At `lists add`, a failed attempt that will be tried again is said with why and
    /// when (not a silent wait), and the failure says what to try now, not "the next refresh" or
    /// "remove the list": nothing was added.
    @Test func lists_add_says_each_retry_and_what_to_try_when_the_list_cannot_be_fetched() async throws {
        let server = try await EngineServer(lists: ListsConfiguration(fetchPolicy: FetchPolicy(attempts: 2, firstRetryDelay: .seconds(1))))
        defer { Task { await server.stop() } }
        // Port 1 on loopback: nothing listens, the connection is refused at once.
        let unreachable = try await server.cli(["lists", "add", "http://127.0.0.1:1/list.txt", "--name", "gone"])
        #expect(unreachable.status == 1, "\(unreachable)")
        #expect(unreachable.stderr.contains("Attempt 1 failed") && unreachable.stderr.contains("Trying again in 1 s"), "\(unreachable.stderr)")
        #expect(!unreachable.stderr.contains("next refresh") && unreachable.stderr.contains("Nothing was added"), "\(unreachable.stderr)")

        let webRoot = try makeTemporaryDirectory(mode: 0o755)
        defer { try? FileManager.default.removeItem(atPath: webRoot) }
        let web = try await ListHTTPServer.start(directory: webRoot)
        defer { web.stop() }
        let missing = try await server.cli(["lists", "add", web.url("moved.txt"), "--name", "moved"])
        #expect(missing.status == 1, "\(missing)")
        #expect(missing.stderr.contains("HTTP 404") && !missing.stderr.contains("remove the list"), "\(missing.stderr)")
        #expect(missing.stderr.contains("Nothing was added"), "\(missing.stderr)")
        #expect(try await server.cli(["lists", "list"]).stdout.contains("No downloaded lists yet"))
    }

    /// The words the walk found wrong.
    @Test func the_cli_words_are_plain() async throws {
        let server = try await EngineServer(socketMode: 0o666, directoryMode: 0o755)
        defer { Task { await server.stop() } }
        try await HouseholdVerbTests.household(server)
        let services = try await server.cli(["services", "--category", "shopping"])
        #expect(services.stdout.contains("Amazon (shopping)") && !services.stdout.contains("(shopping) (shopping)"), "\(services.stdout)")
        let focus = try await server.cli(["focus", "30m", "--entries", "tiktok"])
        #expect(focus.stdout.contains("tiktok stays blocked"), "\(focus.stdout)")
        let digest = try await server.cli(["digest"])
        #expect(digest.stdout.contains("Sun 19:00") && !digest.stdout.contains("(Sun 19:00)"), "\(digest.stdout)")
        let asked = try await HouseholdVerbTests.cli(as: 40002, ["ask", "15m", "--note", "chores", "--profile", "kids", "--json"], server)
        let id = try #require((try JSONSerialization.jsonObject(with: Data(asked.stdout.utf8)) as? [String: Any])?["id"] as? Int)
        let approved = try await server.cli(["requests", "approve", "\(id)"])
        #expect(approved.status == 0 && !approved.stdout.contains("kids's"), "\(approved.stdout)")
    }
}
}
