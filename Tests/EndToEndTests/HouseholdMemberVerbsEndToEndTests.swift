import Foundation
import Testing

/// A review of the page (SPEC §9a): what the CLI lets a member do for their own profile that the page lacked —
/// a bypass's `--task`, `use` without `--for`, `export --csv`, `plan list --all`, `events --since` —
/// and the page's own bounds: minutes a form cannot overflow, the address it is bound to, and
/// allowed queries that stay out of the log while devices use it.
@Suite("Household page: the rest of the member's verbs and the page's bounds")
struct HouseholdMemberVerbsEndToEndTests {
    /// The grants of `profile`, from `scrolloff status --json`.
    static func grants(_ helper: HouseholdHelper, _ profile: String) throws -> [[String: Any]] {
        let status = try helper.cli(["status", "--profile", profile, "--json"]).output
        let object = try JSONSerialization.jsonObject(with: Data(status.utf8)) as? [String: Any]
        return object?["grants"] as? [[String: Any]] ?? []
    }

    @Test func a_peek_and_a_use_carry_their_task_and_a_use_without_minutes_runs_until_stopped() throws {
        let scratch = try Scratch()
        let helper = try HouseholdHelper(scratch: scratch)
        #expect(try helper.cli(["block", "tiktok", "instagram", "--profile", "kid"]).exitCode == 0)
        #expect(try helper.cli(["adjust", "+30m", "--note", "chores", "--profile", "kid"]).exitCode == 0)
        let kid = helper.device("127.0.0.2")
        let moment = try kid.get("/moment?action=peek&entry=tiktok")
        #expect(moment.body.contains("name=\"task\""), "\(moment.body)")
        let token = try #require(moment.csrf)

        #expect(try kid.post("/bypass", [("csrf", token), ("action", "peek"), ("entry", "tiktok"), ("task", "reply to Sam")]).status == 303)
        // `use` with the minutes left empty: no limit, as `scrolloff use instagram` without --for.
        let use = try kid.get("/moment?action=use&entry=instagram&minutes=")
        #expect(use.status == 200 && use.body.contains("until you stop"), "\(use.body)")
        #expect(try kid.post("/bypass", [("csrf", token), ("action", "use"), ("entry", "instagram"), ("minutes", ""),
                                         ("task", "homework chat")]).status == 303)
        let grants = try Self.grants(helper, "kid")
        #expect(grants.first { $0["entry"] as? String == "tiktok" }?["task"] as? String == "reply to Sam", "\(grants)")
        let spend = try #require(grants.first { $0["entry"] as? String == "instagram" }, "\(grants)")
        #expect(spend["task"] as? String == "homework chat")
        // Open as long as the credit lasts (32 min), not a default length.
        let start = try #require((spend["start"] as? String).flatMap { ISO8601DateFormatter().date(from: $0) })
        let end = try #require((spend["end"] as? String).flatMap { ISO8601DateFormatter().date(from: $0) })
        #expect(end.timeIntervalSince(start) > 25 * 60, "\(spend)")
        // The page shows the task while the grant runs, as `status` does.
        let page = try kid.get("/").body
        #expect(page.contains("task “reply to Sam”") && page.contains("task “homework chat”"), "\(page)")

        // A task longer than the page takes changes nothing.
        let long = String(repeating: "x", count: 201)
        #expect(try kid.post("/bypass", [("csrf", token), ("action", "token"), ("entry", "tiktok"), ("task", long)]).status == 400)
    }

    @Test func the_export_holds_the_devices_profile_only_with_the_clis_rows_for_it() throws {
        let scratch = try Scratch()
        let helper = try HouseholdHelper(scratch: scratch)
        #expect(try helper.cli(["adjust", "+5m", "--note", "kid chores", "--profile", "kid"]).exitCode == 0)
        #expect(try helper.cli(["adjust", "+7m", "--note", "parent secret", "--profile", "parent"]).exitCode == 0)
        #expect(try helper.cli(["block", "tiktok", "--profile", "kid", "--reason", "homework first"]).exitCode == 0)
        let kid = helper.device("127.0.0.2")
        let history = try kid.get("/history")
        #expect(history.body.contains("href=\"/export.csv\""))
        let export = try kid.get("/export.csv?profile=parent")
        #expect(export.status == 200)
        #expect(export.header("Content-Type")?.hasPrefix("text/csv") == true, "\(export.headers)")
        #expect(export.body.contains("kid chores") && !export.body.contains("parent secret"), "\(export.body)")

        // The same rows as root's `scrolloff export --csv` has for profile kid, byte for byte per row.
        let all = try helper.cli(["export", "--csv"]).output
        #expect(all.contains("parent secret"))
        let pagePath = try scratch.file("page.csv", export.body)
        let cliPath = try scratch.file("cli.csv", all)
        let compare = try runWithStatus("/usr/bin/python3", ["-c", """
            import csv, sys
            def rows(path):
                with open(path, newline="") as f:
                    return list(csv.reader(f, strict=True))
            page, cli = rows(sys.argv[1]), rows(sys.argv[2])
            assert page[0] == cli[0], (page[0], cli[0])
            mine = [r for r in cli[1:] if r[4] == "kid"]
            assert len(mine) >= 3 and page[1:] == mine, (page[1:], mine)
            print("same", len(mine))
            """, pagePath, cliPath])
        #expect(compare.exitCode == 0 && compare.output.hasPrefix("same"), "\(compare)")
    }

    @Test func archived_plans_stay_readable_and_older_events_are_offered_by_span() throws {
        let scratch = try Scratch()
        let helper = try HouseholdHelper(scratch: scratch)
        #expect(try helper.cli(["plan", "add", "--when", "I'm bored", "--then", "juggle", "--profile", "kid"]).exitCode == 0)
        let id = try sqlite("\(helper.state)/scrolloff.sqlite", "SELECT id FROM plans WHERE profile = 'kid'")
        #expect(try helper.cli(["plan", "archive", id, "--profile", "kid"]).exitCode == 0)
        let kid = helper.device("127.0.0.2")
        let plans = try kid.get("/plans").body
        #expect(plans.contains("class=\"plan archived\" data-id=\"\(id)\"") && plans.contains("juggle"), "\(plans)")
        #expect(!plans.contains("action=\"/plans/archive\""), "an archived plan has no Archive button")

        let month = try kid.get("/history?days=30").body
        #expect(month.contains("The last 30 days") && month.contains("href=\"/history?days=90\""), "\(month)")
        // A span the page does not offer falls back to a week.
        #expect(try kid.get("/history?days=100000").body.contains("The last 7 days"))
    }

    /// The owner's schedule form takes what `scrolloff schedule add` takes: `--curfew --strict` and
    /// `--days mon,wed`, not only daily, weekdays or weekends.
    @Test func an_owner_adds_a_strict_curfew_on_chosen_days() throws {
        let scratch = try Scratch(), helper = try HouseholdHelper(scratch: scratch, ownerPassword: true)
        let owner = helper.device("127.0.0.3")
        let signIn = try #require(try owner.get("/signin").csrf)
        #expect(try owner.post("/signin", [("csrf", signIn), ("name", HouseholdHelper.ownerName),
                                           ("password", HouseholdHelper.ownerPassword)]).status == 303)
        let page = try owner.get("/owner")
        #expect(page.body.contains("name=\"strict\"") && page.body.contains("name=\"days\""))
        let token = try #require(page.csrf)
        let added = try owner.post("/owner/schedules", [("csrf", token), ("profile", "kid"), ("name", "school-nights"), ("from", "21:30"),
                                                        ("to", "06:30"), ("days", "mon,wed"), ("entries", "tiktok"), ("curfew", "on"),
                                                        ("strict", "on")])
        #expect(added.status == 303, "\(added)")
        let listed = try helper.cli(["schedule", "list", "--profile", "kid", "--json"]).output
        let schedules = (try JSONSerialization.jsonObject(with: Data(listed.utf8)) as? [String: Any])?["schedules"] as? [[String: Any]]
        let schedule = try #require(schedules?.first { $0["name"] as? String == "school-nights" }, "\(listed)")
        #expect(schedule["kind"] as? String == "strict-curfew", "\(schedule)")
        // SPEC §2's bitmask: Mon=2, Wed=8.
        #expect(schedule["days"] as? Int == 10, "\(schedule)")
    }

    /// A minutes field is bounded before it is turned into seconds: a number near Int64's limit
    /// would overflow and trap the helper, which serves every device's DNS.
    @Test func a_huge_number_of_minutes_is_refused_and_the_helper_keeps_serving() throws {
        let scratch = try Scratch(), helper = try HouseholdHelper(scratch: scratch, ownerPassword: true)
        let kid = helper.device("127.0.0.2")
        let token = try #require(try kid.get("/").csrf)
        let huge = "999999999999999999"
        #expect(try kid.post("/ask", [("csrf", token), ("minutes", huge), ("note", "forever")]).status == 400)
        #expect(try kid.post("/ask", [("csrf", token), ("minutes", "1441"), ("note", "a day and a minute")]).status == 400)
        let owner = helper.device("127.0.0.3")
        let signIn = try #require(try owner.get("/signin").csrf)
        #expect(try owner.post("/signin", [("csrf", signIn), ("name", HouseholdHelper.ownerName),
                                           ("password", HouseholdHelper.ownerPassword)]).status == 303)
        let ownerToken = try #require(try owner.get("/owner").csrf)
        for sign in ["+", "-"] {
            let answer = try owner.post("/owner/adjust", [("csrf", ownerToken), ("profile", "kid"), ("sign", sign), ("minutes", huge), ("note", "x")])
            #expect(answer.status == 400, "\(sign): \(answer.status)")
        }
        #expect(helper.child.isRunning, "\(helper.child.stderr)")
        #expect(try kid.get("/").status == 200)
        #expect(try helper.cli(["requests", "--all", "--json"]).output.contains("\"requests\" : ["))
    }

    /// "Bind only where configured": bound to 127.0.0.1, the page does not answer on another
    /// address of the same machine (a wildcard bind would).
    @Test func the_page_answers_only_on_the_address_it_is_bound_to() throws {
        let scratch = try Scratch()
        let helper = try HouseholdHelper(scratch: scratch)
        let bound = try runWithStatus("/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "5",
                                                        "http://127.0.0.1:\(helper.webPort)/"])
        #expect(bound.output == "200", "\(bound)")
        let other = try runWithStatus("/usr/bin/curl", ["-s", "-o", "/dev/null", "--max-time", "5", "http://127.0.0.2:\(helper.webPort)/"])
        // curl's exit code 7: could not connect.
        #expect(other.exitCode == 7, "\(other)")
    }

    /// SPEC §9 privacy with the page and profiles in use: a household device's allowed questions
    /// never reach the log, at any level, while its blocked ones are still counted.
    @Test func a_devices_allowed_queries_never_reach_the_log_even_at_trace() throws {
        let scratch = try Scratch()
        let helper = try HouseholdHelper(scratch: scratch, extra: ["--log-level", "trace"])
        #expect(try helper.cli(["block", "tiktok", "--profile", "kid"]).exitCode == 0)
        let line = try helper.child.waitForLine { $0.hasPrefix("listening udp 127.0.0.1:") }
        let port = try #require(line.split(separator: ":").last.flatMap { Int($0) })
        let kid = helper.device("127.0.0.2")
        #expect(try kid.get("/").status == 200)
        for name in ["homework-help.example", "school-portal.example"] {
            _ = try runWithStatus("/usr/bin/dig", ["@127.0.0.1", "-p", "\(port)", "-b", "127.0.0.2", "+time=2", "+tries=1", name, "A"])
        }
        let blocked = try run("/usr/bin/dig", ["@127.0.0.1", "-p", "\(port)", "-b", "127.0.0.2", "+time=2", "+tries=1", "+short", "tiktok.com", "A"])
        #expect(blocked.contains("0.0.0.0"), "\(blocked)")
        #expect(try kid.get("/history").status == 200)
        // The blocked question is counted as the kid's urge (SPEC §7); the recorder is asynchronous.
        var urges = 0
        for _ in 0..<30 where urges == 0 {
            let stats = try helper.cli(["stats", "--profile", "kid", "--json"]).output
            urges = ((try? JSONSerialization.jsonObject(with: Data(stats.utf8))) as? [String: Any])?["urges"] as? Int ?? 0
            if urges == 0 { usleep(100_000) }
        }
        #expect(urges >= 1)
        helper.child.signal(SIGTERM)
        helper.child.process.wait()
        let log = helper.child.stderr.lowercased()
        #expect(log.contains(" debug "), "the log was written at trace: \(log.suffix(2000))")
        for name in ["homework-help.example", "school-portal.example"] {
            #expect(!log.contains(name), "\(name) in the log")
        }
    }
}
