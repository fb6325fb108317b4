import Foundation
import Testing

/// SPEC §11 "a household member can do from a phone everything the CLI lets them do for their own
/// profile": the verbs beyond status, peek, use, token, stop and ask — `plan add/list/archive`,
/// `alternatives add/list`, `focus`, `stats`, `events`, `wallet`'s batches and `schedule list` —
/// over HTTP against the real helper, each on the device's own profile and never another's.
@Suite("Household page: the member's other verbs")
struct HouseholdParityEndToEndTests {
    @Test func plans_alternatives_and_focus_act_on_the_devices_profile_whatever_the_form_says() throws {
        let scratch = try Scratch()
        let helper = try HouseholdHelper(scratch: scratch)
        #expect(try helper.cli(["plan", "add", "--when", "I'm restless at work", "--then", "stretch", "--profile", "parent"]).exitCode == 0)
        let parentPlan = try sqlite("\(helper.state)/scrolloff.sqlite", "SELECT id FROM plans WHERE profile = 'parent'")
        let kid = helper.device("127.0.0.2")
        let token = try #require(try kid.get("/plans").csrf)
        let elsewhere = ("profile", "parent")

        // Each POST without its CSRF token is refused and does nothing.
        for (path, fields) in [("/plans", [("when", "bored"), ("then", "read")]), ("/alternatives", [("text", "walk")]),
                               ("/focus", [("minutes", "30")]), ("/plans/archive", [("id", parentPlan)])] {
            #expect(try kid.post(path, fields).status == 403, "\(path)")
        }
        #expect(try sqlite("\(helper.state)/scrolloff.sqlite", "SELECT count(*) FROM plans WHERE profile = 'kid'") == "0")

        // plan add, alternatives add and focus go to the kid's profile, not the one the form names.
        #expect(try kid.post("/plans", [("csrf", token), ("when", "I'm bored after school"), ("then", "shoot hoops"), elsewhere]).status == 303)
        #expect(try kid.post("/alternatives", [("csrf", token), ("text", "call grandma"), elsewhere]).status == 303)
        #expect(try kid.post("/focus", [("csrf", token), ("minutes", "30"), ("entries", "tiktok"), ("reason", "revision"), elsewhere]).status == 303)
        let kidPlans = try helper.cli(["plan", "list", "--profile", "kid"]).output
        #expect(kidPlans.contains("shoot hoops"), "\(kidPlans)")
        #expect(!(try helper.cli(["plan", "list", "--profile", "parent"]).output.contains("shoot hoops")))
        #expect(try helper.cli(["alternatives", "list", "--profile", "kid"]).output.contains("call grandma"))
        #expect(!(try helper.cli(["alternatives", "list", "--profile", "parent"]).output.contains("call grandma")))
        #expect(try sqlite("\(helper.state)/scrolloff.sqlite", "SELECT profile || ':' || reason FROM focus_sessions") == "kid:revision")
        // The kid's plans page shows them, and nothing of the parent's.
        let page = try kid.get("/plans")
        #expect(page.body.contains("shoot hoops") && page.body.contains("call grandma"))
        #expect(!page.body.contains("stretch"))

        // Archiving the parent's plan by its id from the kid's device is refused: the engine looks
        // the id up in the device's profile only.
        let archive = try kid.post("/plans/archive", [("csrf", token), ("id", parentPlan), elsewhere])
        #expect(archive.status == 404, "\(archive)")
        #expect(try sqlite("\(helper.state)/scrolloff.sqlite", "SELECT archived FROM plans WHERE id = \(parentPlan)") == "0")
        let kidPlan = try sqlite("\(helper.state)/scrolloff.sqlite", "SELECT id FROM plans WHERE profile = 'kid'")
        #expect(try kid.post("/plans/archive", [("csrf", token), ("id", kidPlan)]).status == 303)
        #expect(try sqlite("\(helper.state)/scrolloff.sqlite", "SELECT archived FROM plans WHERE id = \(kidPlan)") == "1")

        // Focus only tightens, so it is refused nothing; but it cannot be cut short from the page
        // either: stop ends grants, not a focus session.
        let status = try helper.cli(["status", "--profile", "kid", "--json"]).output
        #expect(status.contains("tiktok"), "\(status)")
    }

    @Test func history_shows_the_devices_stats_events_credit_and_schedules_and_no_other_profiles() throws {
        let scratch = try Scratch()
        let helper = try HouseholdHelper(scratch: scratch)
        #expect(try helper.cli(["block", "tiktok", "--profile", "kid", "--reason", "homework first"]).exitCode == 0)
        #expect(try helper.cli(["schedule", "add", "school", "--from", "08:00", "--to", "15:00", "--days", "weekdays",
                                "--entries", "tiktok", "--profile", "kid"]).exitCode == 0)
        #expect(try helper.cli(["block", "reddit", "--profile", "parent", "--reason", "deep work"]).exitCode == 0)
        #expect(try helper.cli(["schedule", "add", "office", "--from", "09:00", "--to", "17:00", "--days", "weekdays",
                                "--entries", "reddit", "--profile", "parent"]).exitCode == 0)
        let history = try helper.device("127.0.0.2").get("/history?profile=parent")
        #expect(history.status == 200)
        // stats for three periods, the kid's events, their schedule.
        #expect(history.body.components(separatedBy: "class=\"stats\"").count - 1 == 3, "\(history.body)")
        #expect(history.body.contains("class=\"event\""), "\(history.body)")
        #expect(history.body.contains("tiktok") && history.body.contains("school"))
        // `scrolloff services`: the catalogue with each service's state for the kid's profile.
        #expect(history.body.contains("class=\"service\" data-id=\"tiktok\""), "\(history.body)")
        // Nothing of the parent's: its schedule, its reason, its block (reddit is in the catalogue
        // list, but not blocked for the kid).
        #expect(!history.body.contains("office") && !history.body.contains("deep work"))
        let reddit = try #require(history.body.range(of: "data-id=\"reddit\"")).upperBound
        let item = history.body[reddit...].prefix { $0 != "\n" }
        #expect(item.contains("class=\"state") && !item.contains("state blocked"), "\(item)")
        let tiktok = try #require(history.body.range(of: "data-id=\"tiktok\"")).upperBound
        #expect(history.body[tiktok...].prefix { $0 != "\n" }.contains("state blocked"))
        let parent = try helper.device("127.0.0.3").get("/history")
        #expect(parent.body.contains("office") && !parent.body.contains("school"))
    }

    /// Every POST route of the page, the owners' too, refuses a form without the session's CSRF
    /// token (SPEC §9a); and a failed sign-in never logs what was typed unless it can be a user
    /// name, so a password typed into the name field stays out of the journal.
    @Test func every_post_route_needs_the_csrf_token_and_a_password_typed_as_the_name_is_not_logged() throws {
        let scratch = try Scratch()
        let helper = try HouseholdHelper(scratch: scratch)
        let kid = helper.device("127.0.0.2")
        let token = try #require(try kid.get("/signin").csrf)
        let routes = ["/bypass", "/stop", "/signin", "/signout", "/owner/block", "/owner/unblock", "/ask", "/owner/requests",
                      "/owner/adjust", "/owner/schedules", "/owner/schedules/remove", "/plans", "/plans/archive", "/alternatives", "/focus",
                      "/owner/pause", "/owner/resume", "/owner/allowance", "/owner/allowance/clear"]
        // Every `router.post` of the page's sources is in the list, so a new route cannot be missed.
        let sources = "\(InstallEndToEndTests.sourceRoot)/Sources/HouseholdPage"
        let declared = try FileManager.default.contentsOfDirectory(atPath: sources).flatMap { file in
            try String(contentsOfFile: "\(sources)/\(file)", encoding: .utf8).components(separatedBy: "router.post(\"").dropFirst()
                .compactMap { $0.split(separator: "\"", maxSplits: 1).first.map(String.init) }
        }
        #expect(declared.count >= 19 && Set(declared) == Set(routes), "routes not listed: \(Set(declared).subtracting(routes).sorted())")
        for path in routes {
            let answer = try kid.post(path, [("entry", "tiktok"), ("profile", "kid"), ("minutes", "5")])
            #expect(answer.status == 403, "\(path): \(answer.status)")
        }
        let failed = try kid.post("/signin", [("csrf", token), ("name", "my secret words"), ("password", "correct horse battery")])
        #expect(failed.status == 401)
        #expect(helper.child.stderr.contains("a sign-in failed"), "\(helper.child.stderr)")
        #expect(!helper.child.stderr.contains("my secret words"), "\(helper.child.stderr)")
    }

    /// Owner view "tighten rules": a signed-in owner adds a schedule to a profile their uid may
    /// edit, through `scrolloff schedule add`'s engine call; on a profile they do not own, and
    /// from a member's device without a sign-in, it is refused and nothing is added.
    @Test func an_owner_adds_a_schedule_to_their_profile_only() throws {
        let scratch = try Scratch(), helper = try HouseholdHelper(scratch: scratch, ownerPassword: true)
        let kid = helper.device("127.0.0.2")
        let memberToken = try #require(try kid.get("/").csrf)
        let fields = [("name", "lights-out"), ("from", "21:00"), ("to", "07:00"), ("days", "daily"), ("entries", "tiktok"), ("reason", "sleep")]
        #expect(try kid.post("/owner/schedules", [("csrf", memberToken), ("profile", "kid")] + fields).status == 401)
        let owner = helper.device("127.0.0.3")
        let signIn = try #require(try owner.get("/signin").csrf)
        #expect(try owner.post("/signin", [("csrf", signIn), ("name", HouseholdHelper.ownerName),
                                           ("password", HouseholdHelper.ownerPassword)]).status == 303)
        let page = try owner.get("/owner")
        #expect(page.body.contains("action=\"/owner/schedules\""))
        let token = try #require(page.csrf)
        #expect(try owner.post("/owner/schedules", [("csrf", token), ("profile", "parent")] + fields).status == 403)
        #expect(try owner.post("/owner/schedules", [("csrf", token), ("profile", "kid")] + fields).status == 303)
        #expect(try helper.cli(["schedule", "list", "--profile", "kid"]).output.contains("lights-out"))
        #expect(!(try helper.cli(["schedule", "list", "--profile", "parent"]).output.contains("lights-out")))
        // The kid sees it on their history page, with its reason.
        let history = try kid.get("/history")
        #expect(history.body.contains("lights-out") && history.body.contains("“sleep”"), "\(history.body)")
    }
}
