import Foundation
import Testing

/// The household page over HTTP (SPEC §9a), against the real helper: which profile a device sees,
/// the CSRF and session checks, refusals in the CLI's words, owners' rights and sign-in throttling.
@Suite("Household page over HTTP")
struct HouseholdWebEndToEndTests {
    @Test func each_device_sees_its_own_profile_and_a_profile_parameter_changes_nothing() throws {
        let scratch = try Scratch()
        let helper = try HouseholdHelper(scratch: scratch)
        #expect(try helper.cli(["block", "tiktok", "--profile", "kid", "--reason", "homework first"]).exitCode == 0)
        #expect(try helper.cli(["block", "reddit", "--profile", "parent", "--reason", "deep work"]).exitCode == 0)

        let kid = helper.device("127.0.0.2")
        let page = try kid.get("/")
        #expect(page.status == 200)
        #expect(page.body.contains("Profile kid"))
        #expect(page.body.contains("id=\"entry-tiktok\" data-state=\"blocked\""))
        #expect(page.body.contains("“homework first”"))
        #expect(!page.body.contains("reddit") && !page.body.contains("deep work"))
        // Asking for another profile by name reads nothing of it: the device decides.
        let other = try kid.get("/?profile=parent")
        #expect(other.body.contains("Profile kid") && !other.body.contains("deep work"))
        let parent = try helper.device("127.0.0.3").get("/")
        #expect(parent.body.contains("Profile parent") && parent.body.contains("“deep work”") && !parent.body.contains("tiktok"))
        // The session cookie is out of scripts' and other sites' reach.
        let cookie = page.header("Set-Cookie") ?? ""
        #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"))
    }

    @Test func a_post_without_the_csrf_token_or_the_session_is_403_and_changes_nothing() throws {
        let scratch = try Scratch()
        let helper = try HouseholdHelper(scratch: scratch)
        #expect(try helper.cli(["block", "tiktok", "--profile", "kid"]).exitCode == 0)
        let kid = helper.device("127.0.0.2")
        let moment = try kid.get("/moment?action=peek&entry=tiktok")
        let token = try #require(moment.csrf)
        let fields = [("action", "peek"), ("entry", "tiktok")]

        #expect(try kid.post("/bypass", fields).status == 403)
        #expect(try kid.post("/bypass", fields + [("csrf", String(token.reversed()))]).status == 403)
        // The right token without the cookie it belongs to, as a page on another site would send it.
        #expect(try kid.post("/bypass", fields + [("csrf", token)], cookies: false).status == 403)
        #expect(try kid.post("/stop", [("entry", "tiktok")]).status == 403)
        let status = try helper.cli(["status", "--profile", "kid", "--json"])
        #expect(status.output.contains("\"peeks_left_today\" : 3"), "no peek was taken: \(status)")

        // With both, the same request goes through.
        let done = try kid.post("/bypass", fields + [("csrf", token)])
        #expect(done.status == 303)
        #expect(try helper.cli(["status", "--profile", "kid", "--json"]).output.contains("\"peeks_left_today\" : 2"))
    }

    /// The 2-minute timer runs in the page, so the helper records "completed" only when the time has
    /// passed since it served the exercise: a form sent at once (no JavaScript, or made by hand)
    /// is recorded as skipped.
    @Test func an_exercise_claimed_completed_right_after_its_page_opened_is_recorded_as_skipped() throws {
        let scratch = try Scratch()
        let helper = try HouseholdHelper(scratch: scratch)
        #expect(try helper.cli(["block", "tiktok", "--profile", "kid"]).exitCode == 0)
        let kid = helper.device("127.0.0.2")
        let page = try kid.get("/exercise?action=token&entry=tiktok")
        let token = try #require(page.csrf)
        let done = try kid.post("/bypass", [("csrf", token), ("action", "token"), ("entry", "tiktok"), ("outcome", "completed")])
        // The default preset has no tokens, so the token itself is refused; the exercise's outcome
        // is recorded first, as the terminal flow records it.
        #expect(done.status == 409)
        let rows = try sqlite("\(helper.state)/scrolloff.sqlite", "SELECT outcome FROM exercise_sessions WHERE profile = 'kid'")
        #expect(rows == "skipped", "recorded: \(rows)")
    }

    @Test func refusals_carry_the_rule_the_time_it_opens_and_the_reason_like_the_cli() throws {
        let scratch = try Scratch(), helper = try HouseholdHelper(scratch: scratch, ownerPassword: true)
        #expect(try helper.cli(["block", "tiktok", "--profile", "kid", "--reason", "homework first"]).exitCode == 0)
        // SPEC §8: the moment shows the plan whose trigger fits it (the entry), not the newest,
        // and counts it once for the flow however often the page is loaded.
        #expect(try helper.cli(["plan", "add", "--profile", "kid", "--when", "TikTok pulls me in", "--then", "I will text a friend"]).exitCode == 0)
        #expect(try helper.cli(["plan", "add", "--profile", "kid", "--when", "I feel bored", "--then", "I will stretch"]).exitCode == 0)
        let kid = helper.device("127.0.0.2")
        _ = try kid.get("/moment?action=peek&entry=tiktok")
        let moment = try kid.get("/moment?action=peek&entry=tiktok")
        #expect(moment.body.contains("TikTok pulls me in") && !moment.body.contains("I feel bored"), "\(moment.body)")
        let token = try #require(moment.csrf)
        #expect(try kid.post("/bypass", [("csrf", token), ("action", "peek"), ("entry", "tiktok")]).status == 303)
        let plans = try helper.cli(["plan", "list", "--profile", "kid", "--json"])
        let planRows = try #require((try JSONSerialization.jsonObject(with: Data(plans.output.utf8)) as? [String: Any])?["plans"] as? [[String: Any]])
        #expect(planRows.first { $0["when"] as? String == "TikTok pulls me in" }?["times_referenced"] as? Int == 1, "\(plans.output)")
        #expect(planRows.first { $0["when"] as? String == "I feel bored" }?["times_referenced"] as? Int == 0)
        // A second peek right after the first: the bypass lockout, with its end.
        let again = try kid.post("/bypass", [("csrf", token), ("action", "peek"), ("entry", "tiktok")])
        #expect(again.status == 409)
        #expect(again.body.contains("data-rule=\"bypass_lockout\""))
        #expect(again.body.contains("tiktok can be opened again at "), "\(again.body)")
        #expect(again.body.contains(" — 3 min") || again.body.contains(" — 2 min"))
        // The CLI refuses the same way, from the same engine call.
        let cli = try helper.cli(["peek", "tiktok", "--profile", "kid"])
        #expect(cli.exitCode == 1 && cli.output.contains("tiktok can be opened again at "))

        // Loosening from the owner's page meets the block's cooldown, with the person's reason.
        let owner = helper.device("127.0.0.3")
        let signIn = try #require(try owner.get("/signin").csrf)
        #expect(try owner.post("/signin", [("csrf", signIn), ("name", HouseholdHelper.ownerName), ("password", HouseholdHelper.ownerPassword)]).status == 303)
        let ownerPage = try owner.get("/owner")
        let ownerToken = try #require(ownerPage.csrf)
        // SPEC §7: the owner sees each member's week as charts, in that member's section.
        let kidSection = try #require(ownerPage.body.range(of: #"id="profile-kid""#).map { ownerPage.body[$0.lowerBound...] })
        let kidPart = kidSection.prefix(upTo: kidSection.range(of: "</section>")?.lowerBound ?? kidSection.endIndex)
        for chart in ["chart trend", "chart heatmap", "chart top"] { #expect(kidPart.contains("class=\"\(chart)\""), "\(chart)") }
        let unblock = try owner.post("/owner/unblock", [("csrf", ownerToken), ("profile", "kid"), ("entry", "tiktok")])
        #expect(unblock.status == 409)
        #expect(unblock.body.contains("data-rule=\"cooldown\""))
        #expect(unblock.body.contains("tiktok is in cooldown until "))
        #expect(unblock.body.contains("Your reason: “homework first”"))

        // SPEC §12: events name who changed a rule and who was refused, by what, until when.
        let listed = try helper.cli(["events", "--profile", "kid", "--json"])
        let events = try #require((try JSONSerialization.jsonObject(with: Data(listed.output.utf8)) as? [String: Any])?["events"] as? [[String: Any]])
        let block = try #require(events.compactMap { $0["rule_change"] as? [String: Any] }.first { $0["change"] as? String == "block" })
        #expect(block["actor"] as? String == "root (uid 0)")
        let refusals = events.compactMap { $0["refusal"] as? [String: Any] }
        let fromDevice = try #require(refusals.first { $0["actor"] as? String == "device 127.0.0.2 on the household page" })
        #expect(fromDevice["rule"] as? String == "bypass_lockout" && fromDevice["action"] as? String == "peek")
        #expect(fromDevice["opens_at"] is String)
        #expect(refusals.contains { $0["actor"] as? String == "root (uid 0)" && $0["rule"] as? String == "bypass_lockout" })
        let fromOwner = try #require(refusals.first { ($0["actor"] as? String)?.hasPrefix("web owner \(HouseholdHelper.ownerName) (uid ") == true })
        #expect(fromOwner["rule"] as? String == "cooldown" && fromOwner["action"] as? String == "unblock")
        #expect(fromOwner["reason"] as? String == "homework first")
    }

    @Test func an_owner_acts_only_on_profiles_their_uid_may_touch_and_a_member_on_none() throws {
        let scratch = try Scratch(), helper = try HouseholdHelper(scratch: scratch, ownerPassword: true)
        let kid = helper.device("127.0.0.2")
        // No sign-in: the owner's page sends to the sign-in, and its forms are refused.
        let unsigned = try kid.get("/owner")
        #expect(unsigned.status == 303 && unsigned.header("Location") == "/signin")
        let memberToken = try #require(try kid.get("/signin").csrf)
        let memberBlock = try kid.post("/owner/block", [("csrf", memberToken), ("profile", "parent"), ("entry", "youtube")])
        #expect(memberBlock.status == 401)

        let owner = helper.device("127.0.0.3")
        let signIn = try #require(try owner.get("/signin").csrf)
        let signedIn = try owner.post("/signin", [("csrf", signIn), ("name", HouseholdHelper.ownerName), ("password", HouseholdHelper.ownerPassword)])
        #expect(signedIn.status == 303 && signedIn.header("Location") == "/owner")
        // A new session id at sign-in (session fixation).
        #expect(signedIn.header("Set-Cookie")?.contains("HttpOnly") == true)
        let page = try owner.get("/owner")
        #expect(page.body.contains("id=\"profile-kid\"") && !page.body.contains("id=\"profile-parent\""))
        let token = try #require(page.csrf)
        // uid 65534 owns kid only; parent has no owner, so only root and group scrolloff may touch it.
        let refused = try owner.post("/owner/block", [("csrf", token), ("profile", "parent"), ("entry", "youtube")])
        #expect(refused.status == 403)
        #expect(refused.body.contains("may not act on profile &#39;parent&#39;") || refused.body.contains("may not act on profile 'parent'"), "\(refused.body)")
        #expect(!(try helper.cli(["status", "--profile", "parent"]).output.contains("youtube")))
        // Tightening their own profile goes through the engine's block.
        let blocked = try owner.post("/owner/block", [("csrf", token), ("profile", "kid"), ("entry", "youtube"), ("reason", "school night")])
        #expect(blocked.status == 303)
        #expect(try helper.cli(["status", "--profile", "kid"]).output.contains("youtube"))
        #expect(try kid.get("/").body.contains("“school night”"))
    }

    @Test func sign_ins_are_throttled_per_device_while_another_device_still_signs_in() throws {
        let scratch = try Scratch(), helper = try HouseholdHelper(scratch: scratch, ownerPassword: true)
        let guesser = helper.device("127.0.0.4")
        let token = try #require(try guesser.get("/signin").csrf)
        // A name each time: the per-name wait (`SignInBackoff`, after 3 wrong in a row) is another
        // bound, with a test of its own (HouseholdWebSlowClientEndToEndTests).
        for guess in 1...5 {
            let answer = try guesser.post("/signin", [("csrf", token), ("name", "guessed-name-\(guess)"), ("password", "guess number \(guess)")])
            #expect(answer.status == 401, "guess \(guess): \(answer.status)")
        }
        // The sixth try is refused before the password is even checked, right or not.
        let throttled = try guesser.post("/signin", [("csrf", token), ("name", HouseholdHelper.ownerName), ("password", HouseholdHelper.ownerPassword)])
        #expect(throttled.status == 429)
        #expect(Int(throttled.header("Retry-After") ?? "") ?? 0 > 60)
        #expect(throttled.body.contains("Too many sign-in attempts from this device"))
        // Another device is not held back by this one's budget.
        let owner = helper.device("127.0.0.5")
        let ownerToken = try #require(try owner.get("/signin").csrf)
        #expect(try owner.post("/signin", [("csrf", ownerToken), ("name", HouseholdHelper.ownerName), ("password", HouseholdHelper.ownerPassword)]).status == 303)
    }
}

@Suite("Household page: asking for time over HTTP")
struct HouseholdWebRequestTests {
    @Test func a_member_asks_an_owner_approves_into_the_ledger_and_nobody_answers_for_a_profile_they_do_not_own() throws {
        let scratch = try Scratch(), helper = try HouseholdHelper(scratch: scratch, ownerPassword: true)
        let kid = helper.device("127.0.0.2"), parentDevice = helper.device("127.0.0.3")
        let kidToken = try #require(try kid.get("/signin").csrf)
        // A note over 280 characters, or with a line break that would forge a log line, is a 400
        // saying the bound, and nothing is asked.
        let long = try kid.post("/ask", [("csrf", kidToken), ("minutes", "15"), ("note", String(repeating: "a", count: 281))])
        #expect(long.status == 400 && long.body.contains("at most 280 characters"), "\(long.status) \(long.body.prefix(300))")
        #expect(try kid.post("/ask", [("csrf", kidToken), ("minutes", "15"), ("note", "first\nforged")]).status == 400)
        #expect(try kid.post("/ask", [("csrf", kidToken), ("minutes", "15"), ("note", "science project")]).status == 303)
        let parentToken = try #require(try parentDevice.get("/signin").csrf)
        #expect(try parentDevice.post("/ask", [("csrf", parentToken), ("minutes", "30"), ("note", "film night")]).status == 303)
        // Each device asked for its own profile.
        let requests = try helper.cli(["requests", "--all", "--json"]).output
        #expect(requests.contains("\"profile\" : \"kid\"") && requests.contains("\"profile\" : \"parent\""), "\(requests)")
        #expect(!requests.contains("aaaa") && !requests.contains("forged"), "a refused note was stored: \(requests)")
        // A member's page shows its own request only; no device can answer one.
        let kidPage = try kid.get("/")
        #expect(kidPage.body.contains("data-status=\"pending\"") && kidPage.body.contains("science project") && !kidPage.body.contains("film night"))
        #expect(try kid.post("/owner/requests", [("csrf", kidToken), ("id", "1"), ("answer", "approve")]).status == 401)

        let owner = helper.device("127.0.0.4")
        let signIn = try #require(try owner.get("/signin").csrf)
        #expect(try owner.post("/signin", [("csrf", signIn), ("name", HouseholdHelper.ownerName), ("password", HouseholdHelper.ownerPassword)]).status == 303)
        let page = try owner.get("/owner")
        #expect(page.body.contains("science project") && !page.body.contains("film night"))
        let token = try #require(page.csrf)
        // The parent's request, by its id: refused on the request's own profile, whatever the form says.
        let parentID = try #require(Self.id(of: "parent", in: requests))
        let refused = try owner.post("/owner/requests", [("csrf", token), ("id", parentID), ("answer", "approve"), ("profile", "kid")])
        #expect(refused.status == 403)
        let kidID = try #require(Self.id(of: "kid", in: requests))
        #expect(try owner.post("/owner/requests", [("csrf", token), ("id", kidID), ("answer", "approve"), ("note", "ok")]).status == 303)
        // Approval is a ledger adjust row of the request's length; the member sees the answer.
        #expect(try helper.cli(["wallet", "--profile", "kid", "--json"]).output.contains("\"balance_seconds\" : 1020"))
        #expect(try kid.get("/").body.contains("data-status=\"approved\""))
        #expect(try helper.cli(["requests", "--all", "--json"]).output.contains("\"status\" : \"pending\""), "the parent's still waits")
        // Grant and take minutes from the page: adjust rows with the note.
        #expect(try owner.post("/owner/adjust", [("csrf", token), ("profile", "kid"), ("sign", "-"), ("minutes", "5"), ("note", "late to bed")]).status == 303)
        #expect(try helper.cli(["wallet", "--profile", "kid", "--json"]).output.contains("\"balance_seconds\" : 720"))
        #expect(try owner.post("/owner/adjust", [("csrf", token), ("profile", "parent"), ("minutes", "5"), ("note", "x")]).status == 403)
    }

    /// The id of the first request of `profile` in `scrolloff requests --json`.
    static func id(of profile: String, in json: String) -> String? {
        guard let data = json.data(using: .utf8),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let requests = object["requests"] as? [[String: Any]] else { return nil }
        return requests.first { $0["profile"] as? String == profile }.flatMap { ($0["id"] as? NSNumber)?.stringValue }
    }
}

@Suite("scrolloff-dns web passwd")
struct WebPasswdTests {
    @Test func only_root_sets_a_password_and_only_for_a_user_that_exists() throws {
        let scratch = try Scratch()
        let state = "\(scratch.path)/state"
        let (launcher, prefix) = try PrivilegeMode.ordinaryUser.launcher()
        let asUser = try runWithStatus(launcher, prefix + ["web", "passwd", "nobody", "--state-dir", state])
        #expect(asUser.exitCode != 0 && asUser.output.contains("Only root can set an owner's password"), "\(asUser)")
        let unknown = try runWithStatus(Products.scrolloffDNS, ["web", "passwd", "no-such-user-here", "--state-dir", state])
        #expect(unknown.exitCode != 0 && unknown.output.contains("There is no user “no-such-user-here”"), "\(unknown)")
        // Standard input is /dev/null here: no password, nothing written.
        let empty = try runWithStatus(Products.scrolloffDNS, ["web", "passwd", "nobody", "--state-dir", state])
        #expect(empty.exitCode != 0 && empty.output.contains("No password on standard input"), "\(empty)")
        #expect(!FileManager.default.fileExists(atPath: "\(state)/web-owners"))
    }
}

@Suite("Household page: the action budget")
struct HouseholdWebActionLimitTests {
    @Test func the_31st_action_in_a_minute_from_one_device_is_429_while_another_device_acts() throws {
        let scratch = try Scratch(), helper = try HouseholdHelper(scratch: scratch)
        let kid = helper.device("127.0.0.2")
        let token = try #require(try kid.get("/signin").csrf)
        // `stop` with nothing open: the engine answers, whatever it says; the budget counts the try.
        for attempt in 1...30 {
            let answer = try kid.post("/stop", [("csrf", token)])
            #expect(answer.status != 429, "attempt \(attempt) was refused early")
        }
        let over = try kid.post("/stop", [("csrf", token)])
        #expect(over.status == 429)
        #expect(Int(over.header("Retry-After") ?? "") ?? 0 >= 1)
        #expect(over.body.contains("Too many actions from this device"))
        // The page still serves this device, and another device still acts.
        #expect(try kid.get("/").status == 200)
        let parent = helper.device("127.0.0.3")
        let parentToken = try #require(try parent.get("/signin").csrf)
        #expect(try parent.post("/stop", [("csrf", parentToken)]).status != 429)
    }
}
