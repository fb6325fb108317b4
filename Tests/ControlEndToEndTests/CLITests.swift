import ControlAPI
import Foundation
import Testing

/// The `scrolloff` binary against the real control server: exit codes, --json, and the list verbs
/// end to end with a python http.server and a file:// URL.
extension ControlEndToEnd {
@Suite
struct CLITests {
    @Test func no_helper_exits_3_and_says_how_to_start_it() async throws {
        let result = try await cli(["lists", "list"], socket: "/tmp/soc-nowhere/ctl.sock")
        #expect(result.status == 3)
        #expect(result.stderr.contains("sudo systemctl start scrolloff-dns"))
        #expect(result.stderr.contains("make run"))
    }

    @Test func no_helper_with_json_prints_an_error_object() async throws {
        let result = try await cli(["lists", "list", "--json"], socket: "/tmp/soc-nowhere/ctl.sock")
        #expect(result.status == 3)
        let envelope = try decode(ControlErrorEnvelope.self, result.stdout)
        #expect(envelope.error.code == "helper_unreachable")
    }

    @Test func socket_from_the_environment_is_used() async throws {
        let result = try await cli(["lists", "list"], socket: nil, extraEnvironment: ["SCROLLOFF_SOCKET": "/tmp/soc-env-nowhere.sock"])
        #expect(result.status == 3)
        #expect(result.stderr.contains("/tmp/soc-env-nowhere.sock"))
    }

    @Test(arguments: [
        ["lists", "add"],
        ["lists", "add", "ftp://example.org/list"],
        ["lists", "frobnicate"],
        ["lists", "list", "--bogus"],
        ["lists", "rm"],
    ])
    func usage_errors_exit_2(arguments: [String]) async throws {
        let result = try await cli(arguments, socket: "/tmp/soc-nowhere/ctl.sock")
        #expect(result.status == 2, "\(result)")
        #expect(!result.stderr.isEmpty)
    }

    @Test func help_exits_0() async throws {
        let result = try await cli(["lists", "--help"], socket: nil)
        #expect(result.status == 0)
        #expect(result.stdout.contains("update"))
    }

    @Test func lists_verbs_end_to_end_over_http_and_file_urls() async throws {
        let server = try await RunningServer()
        defer { Task { await server.stop() } }
        let webRoot = server.directory + "/www"
        try FileManager.default.createDirectory(atPath: webRoot, withIntermediateDirectories: true)
        try writeList(webRoot + "/social.txt", names: 12_408)
        let web = try await ListHTTPServer.start(directory: webRoot)
        defer { web.stop() }
        let socket = server.socketPath

        let empty = try await cli(["lists", "list"], socket: socket)
        #expect(empty.status == 0)
        #expect(empty.stdout.contains("No downloaded lists yet"))

        let added = try await cli(["lists", "add", web.url("social.txt"), "--name", "instagram-extra"], socket: socket)
        #expect(added.status == 0, "\(added)")
        #expect(added.stdout.contains("Added instagram-extra: 12,408 names"))

        // A file:// list with a name derived from the file name, and --json output.
        let localFile = server.directory + "/family-blocks.txt"
        try writeList(localFile, names: 2, prefix: "f")
        let local = try await cli(["lists", "add", "file://" + localFile, "--json"], socket: socket)
        #expect(local.status == 0, "\(local)")
        let localAnswer = try decode(AddListResponse.self, local.stdout)
        #expect(localAnswer.result.name == "family-blocks")
        #expect(localAnswer.result.outcome == RefreshOutcome.updated)

        let listed = try await cli(["lists", "list"], socket: socket)
        #expect(listed.status == 0)
        #expect(listed.stdout.contains("2 lists, 12,410 names in force"))
        #expect(listed.stdout.contains("instagram-extra: 12,408 names, refreshed just now"))
        #expect(await server.lists.allowedHosts() == ["127.0.0.1"])

        // The JSON shape scripts rely on.
        let json = try await cli(["lists", "list", "--json"], socket: socket)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let lists = try #require(object["lists"] as? [[String: Any]])
        #expect(object["now"] is String)
        #expect(lists.count == 2)
        for key in ["name", "url", "state", "serving_copy", "entry_count", "last_success", "next_refresh", "last_error", "bad_lines"] {
            #expect(lists[0].keys.contains(key), "missing \(key)")
        }

        // The server loses the file: the update fails, the old copy stays, and `list` says why.
        try FileManager.default.removeItem(atPath: webRoot + "/social.txt")
        let failed = try await cli(["lists", "update", "instagram-extra"], socket: socket)
        #expect(failed.status == 1, "\(failed)")
        #expect(failed.stdout.contains("not updated"))
        #expect(failed.stdout.contains("last good copy (12,408 names)"))
        #expect(failed.stdout.contains("HTTP 404"))
        let copy = server.directory + "/state/lists/instagram-extra.list"
        #expect(try String(contentsOfFile: copy, encoding: .utf8).contains("n12407.example.com"))

        let afterFailure = try await cli(["lists", "list"], socket: socket)
        #expect(afterFailure.stdout.contains("The last refresh failed"))
        #expect(afterFailure.stdout.contains("HTTP 404"))
        #expect(afterFailure.stdout.contains("instagram-extra: 12,408 names"))
        let failedJSON = try decode(ListsResponse.self, try await cli(["lists", "list", "--json"], socket: socket).stdout)
        let entry = try #require(failedJSON.lists.first { $0.name == "instagram-extra" })
        #expect(entry.state == ListState.failing)
        #expect(entry.lastErrorCode == "http-404")
        #expect(entry.servingCopy)

        // Back online with a bigger list: update all succeeds and counts the new names.
        try writeList(webRoot + "/social.txt", names: 20_000)
        let all = try await cli(["lists", "update"], socket: socket)
        #expect(all.status == 0, "\(all)")
        #expect(all.stdout.contains("instagram-extra: updated, 20,000 names"))

        let updateJSON = try await cli(["lists", "update", "family-blocks", "--json"], socket: socket)
        #expect(updateJSON.status == 0)
        #expect(try decode(UpdateListsResponse.self, updateJSON.stdout).results.count == 1)

        let missing = try await cli(["lists", "rm", "nosuch"], socket: socket)
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("There is no list named 'nosuch'"))

        let removed = try await cli(["lists", "rm", "instagram-extra"], socket: socket)
        #expect(removed.status == 0)
        #expect(removed.stdout.contains("Removed list instagram-extra"))
        #expect(!FileManager.default.fileExists(atPath: copy))
        #expect(await server.lists.allowedHosts() == [])
    }

    @Test func adding_a_list_that_cannot_be_fetched_is_refused_and_not_kept() async throws {
        let server = try await RunningServer()
        defer { Task { await server.stop() } }
        let result = try await cli(["lists", "add", "file:///tmp/soc-no-such-file.txt"], socket: server.socketPath)
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("was not added"))
        let listed = try decode(ListsResponse.self, try await cli(["lists", "list", "--json"], socket: server.socketPath).stdout)
        #expect(listed.lists.isEmpty)
    }

    @Test func a_garbage_list_is_rejected_by_the_parser_budget() async throws {
        let server = try await RunningServer()
        defer { Task { await server.stop() } }
        let file = server.directory + "/garbage.txt"
        try String(repeating: "<html><body>not a list at all</body></html>\n", count: 50).write(toFile: file, atomically: true, encoding: .utf8)
        let result = try await cli(["lists", "add", "file://" + file], socket: server.socketPath)
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("not valid rules"))
    }
}
}

extension ControlEndToEnd {
/// `lists update` on a real terminal (util-linux `script` gives it a pty): a progress bar, and
/// colours only without NO_COLOR.
@Suite
struct CLITerminalTests {
    func runOnTerminal(_ command: String, noColor: Bool) async throws -> ProcessResult {
        var environment = ["PATH": "/usr/bin:/bin", "HOME": "/tmp", "TERM": "xterm"]
        if noColor { environment["NO_COLOR"] = "1" }
        return try await run("/usr/bin/script", ["-qfec", command, "/dev/null"], environment: environment)
    }

    @Test func update_on_a_terminal_draws_progress_and_colours_unless_no_color() async throws {
        let server = try await RunningServer()
        defer { Task { await server.stop() } }
        let webRoot = server.directory + "/www"
        try FileManager.default.createDirectory(atPath: webRoot, withIntermediateDirectories: true)
        try writeList(webRoot + "/big.txt", names: 50_000)
        let web = try await ListHTTPServer.start(directory: webRoot)
        defer { web.stop() }
        #expect(try await cli(["lists", "add", web.url("big.txt"), "--name", "big"], socket: server.socketPath).status == 0)
        try writeList(webRoot + "/big.txt", names: 60_000)

        let command = "\(scrolloffBinary) lists update --socket \(server.socketPath)"
        let coloured = try await runOnTerminal(command, noColor: false)
        #expect(coloured.status == 0, "\(coloured)")
        #expect(coloured.stdout.contains("[########################] 100%"), "\(coloured.stdout)")
        #expect(coloured.stdout.contains("\u{1B}[32mupdated\u{1B}[0m"))
        #expect(coloured.stdout.contains("60,000 names"))

        let plain = try await runOnTerminal(command, noColor: true)
        #expect(plain.status == 0)
        #expect(plain.stdout.contains("big: unchanged, 60,000 names") || plain.stdout.contains("big: updated, 60,000 names"), "\(plain.stdout)")
        #expect(!plain.stdout.contains("\u{1B}[3"), "no colour codes with NO_COLOR")

        // Not a terminal: no bar at all.
        let piped = try await cli(["lists", "update"], socket: server.socketPath)
        #expect(!piped.stdout.contains("%"))
        #expect(!piped.stdout.contains("\u{1B}"))
    }
}
}

extension ControlEndToEnd {
/// The CLI run as an unprivileged user (uid 65534, no groups) through `setpriv`.
@Suite
struct CLIPermissionTests {
    func cliAsNobody(_ arguments: [String]) async throws -> ProcessResult {
        try await run(
            "/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", scrolloffBinary] + arguments,
            environment: ["PATH": "/usr/bin:/bin", "HOME": "/tmp", "NO_COLOR": "1"]
        )
    }

    @Test func socket_closed_to_the_user_exits_3_and_names_the_group() async throws {
        let server = try await RunningServer(socketMode: 0o660, directoryMode: 0o755)
        defer { Task { await server.stop() } }
        let result = try await cliAsNobody(["lists", "list", "--socket", server.socketPath])
        #expect(result.status == 3, "\(result)")
        #expect(result.stderr.contains("group 'scrolloff'"))
    }

    @Test func caller_outside_the_group_is_refused_with_exit_1_and_a_reason() async throws {
        let server = try await RunningServer(socketMode: 0o666, directoryMode: 0o755)
        defer { Task { await server.stop() } }
        let result = try await cliAsNobody(["lists", "list", "--socket", server.socketPath])
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("uid 65534"))
        #expect(result.stderr.contains("may not act on profile 'default'"))
    }
}
}

extension ControlEndToEnd.CLITests {
    @Test func bad_lines_within_the_budget_are_counted_and_shown_with_their_line_number() async throws {
        let server = try await RunningServer()
        defer { Task { await server.stop() } }
        let file = server.directory + "/mixed.txt"
        var text = ""
        for index in 0..<999 { text += "ok\(index).example.com\n" }
        text += "not a domain at all!\n"
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        let added = try await cli(["lists", "add", "file://" + file], socket: server.socketPath)
        #expect(added.status == 0, "\(added)")
        #expect(added.stdout.contains("Added mixed: 999 names"))
        #expect(added.stdout.contains("1 line was skipped (first: line 1000:"))
        let listed = try decode(ListsResponse.self, try await cli(["lists", "list", "--json"], socket: server.socketPath).stdout)
        #expect(listed.lists.first?.badLineCount == 1)
        #expect(listed.lists.first?.badLines.first?.lineNumber == 1000)
    }
}
