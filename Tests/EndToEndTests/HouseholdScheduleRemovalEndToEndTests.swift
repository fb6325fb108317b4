import Foundation
import Testing

/// Found after the page was built (SPEC §9a): the owner's page could add schedules but not remove them. Removal is the
/// engine call of `scrolloff schedule rm` (one decision path), so the cooldown that follows adding a
/// schedule refuses it with the same words, and only an owner signed in, with the form's CSRF token,
/// on a profile their uid may edit, can ask. Real helper under faketime, real HTTP (curl).
@Suite("Household page: an owner removes a schedule")
struct HouseholdScheduleRemovalEndToEndTests {
    static func signIn(_ owner: WebDevice) throws {
        let token = try #require(try owner.get("/signin").csrf)
        let answer = try owner.post("/signin", [("csrf", token), ("name", HouseholdHelper.ownerName), ("password", HouseholdHelper.ownerPassword)])
        #expect(answer.status == 303, "\(answer)")
    }

    @Test(.timeLimit(.minutes(2)))
    func removal_is_refused_during_the_cooldown_with_its_words_and_done_after_it_on_the_owners_profile_only() throws {
        let scratch = try Scratch()
        // Monday 2026-11-23 10:00 UTC (after the build date, so the helper trusts the clock).
        let helper = try HouseholdHelper(scratch: scratch, ownerPassword: true,
                                         environment: ["TZ": "UTC"].merging(FakeClock.allClocks(startingAt: "2026-11-23 10:00:00")) { $1 })
        #expect(try helper.cli(["schedule", "add", "homework", "--from", "16:00", "--to", "18:00", "--days", "weekdays",
                                "--entries", "tiktok", "--reason", "homework first", "--profile", "kid"]).exitCode == 0)
        #expect(try helper.cli(["schedule", "add", "office", "--from", "09:00", "--to", "17:00", "--days", "weekdays",
                                "--entries", "reddit", "--profile", "parent"]).exitCode == 0)
        let remove = [("profile", "kid"), ("name", "homework")]

        // A member's device, not signed in: refused, as every owner action is; without the token too.
        let kid = helper.device("127.0.0.2")
        let memberToken = try #require(try kid.get("/").csrf)
        #expect(try kid.post("/owner/schedules/remove", [("csrf", memberToken)] + remove).status == 401)
        let owner = helper.device("127.0.0.3")
        try Self.signIn(owner)
        #expect(try owner.post("/owner/schedules/remove", remove).status == 403)

        // The owner's page lists the kid's schedule with its lock and a Remove form.
        let page = try owner.get("/owner")
        #expect(page.body.contains("data-name=\"homework\"") && page.body.contains("action=\"/owner/schedules/remove\""), "\(page.body)")
        #expect(page.body.contains("locked until 12:00"), "\(page.body)")
        let token = try #require(page.csrf)

        // Within the 2 h cooldown: the engine's refusal, in its words, as `scrolloff schedule rm` says it.
        let refused = try owner.post("/owner/schedules/remove", [("csrf", token)] + remove)
        #expect(refused.status == 409, "\(refused)")
        #expect(refused.body.contains("data-rule=\"cooldown\"") && refused.body.contains("be loosened ("), "\(refused.body)")
        #expect(refused.body.contains("homework first"), "the rule's reason is shown: \(refused.body)")
        let cli = try helper.cli(["schedule", "rm", "homework", "--profile", "kid"])
        #expect(cli.exitCode == 1 && cli.output.contains("can't be loosened"), "\(cli)")
        // A profile the owner's uid may not edit: refused whatever the lock.
        #expect(try owner.post("/owner/schedules/remove", [("csrf", token), ("profile", "parent"), ("name", "office")]).status == 403)
        #expect(try helper.cli(["schedule", "list", "--profile", "kid"]).output.contains("homework"))

        // 12:30: the cooldown is over (every clock moved, as time passing does). Sessions live in the
        // helper's memory, so the owner signs in again.
        try helper.restart(environment: ["TZ": "UTC"].merging(FakeClock.allClocks(startingAt: "2026-11-23 12:30:00")) { $1 })
        let owner2 = helper.device("127.0.0.3")
        try Self.signIn(owner2)
        let token2 = try #require(try owner2.get("/owner").csrf)
        let done = try owner2.post("/owner/schedules/remove", [("csrf", token2)] + remove)
        #expect(done.status == 303 && done.header("location") == "/owner", "\(done)")
        #expect(try owner2.get("/owner").body.contains("kid: removed the schedule “homework”."))
        #expect(!(try helper.cli(["schedule", "list", "--profile", "kid"]).output.contains("homework")))
        #expect(try helper.cli(["schedule", "list", "--profile", "parent"]).output.contains("office"))
        let again = try owner2.post("/owner/schedules/remove", [("csrf", token2)] + remove)
        #expect(again.status == 404 && again.body.contains("There is no schedule"), "\(again)")
        // The events name who removed it.
        let events = try helper.cli(["events", "--profile", "kid", "--json"]).output
        #expect(events.contains("web owner nobody"), "\(events)")
    }
}
