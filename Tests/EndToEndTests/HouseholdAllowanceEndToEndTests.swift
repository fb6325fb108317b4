import Foundation
import Testing

/// Daily allowances on the owner's household page (SPEC §4a, §9a) against the real helper: the
/// file's allowance is in force at start and shown with what is left today; the owner sets and
/// clears one with a form, through the engine calls of `scrolloff allowance`, so a raise inside a
/// cooldown is refused as the CLI refuses it; every forged field is refused before the engine.
@Suite("Household page: daily allowances")
struct HouseholdAllowanceEndToEndTests {
    static let fileAllowance = """

        [[allowances]]
        profile = "kid"
        entries = ["youtube"]
        amount = "30min"

        """

    static func kidAllowances(_ helper: HouseholdHelper) throws -> [[String: Any]] {
        let listed = try helper.cli(["allowance", "list", "--profile", "kid", "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(listed.output.utf8)) as? [String: Any]
        return object?["allowances"] as? [[String: Any]] ?? []
    }

    /// The kid's section of the owner's page.
    static func kidSection(_ page: WebAnswer) -> Substring {
        guard let start = page.body.range(of: #"id="profile-kid""#) else { return "" }
        let rest = page.body[start.lowerBound...]
        return rest.prefix(upTo: rest.range(of: "</section>")?.lowerBound ?? rest.endIndex)
    }

    @Test func an_owner_sets_and_clears_an_allowance_from_the_page_and_forged_fields_change_nothing() throws {
        let scratch = try Scratch()
        let helper = try HouseholdHelper(scratch: scratch, ownerPassword: true, configuration: Self.fileAllowance)
        let owner = helper.device("127.0.0.3")
        let signIn = try #require(try owner.get("/signin").csrf)
        #expect(try owner.post("/signin", [("csrf", signIn), ("name", HouseholdHelper.ownerName), ("password", HouseholdHelper.ownerPassword)]).status == 303)
        let page = try owner.get("/owner")
        let token = try #require(page.csrf)
        // The file's allowance is in force from the start, with what is left today and a Clear button.
        let kid = Self.kidSection(page)
        #expect(kid.contains("Daily allowance: 30 min every day for youtube · 30 min left today"), "\(kid)")
        #expect(kid.contains(#"action="/owner/allowance/clear""#) && kid.contains(#"action="/owner/allowance""#))

        // Forged or hostile fields: refused with a 400 before the engine, and nothing changes.
        let hostile: [[(String, String)]] = [
            [("minutes", "-5")], [("minutes", "0")], [("minutes", "1441")], [("minutes", "99999999999999999999")],
            [("minutes", "1e3")], [("minutes", "")], [("minutes", "6O")],
            [("minutes", "60"), ("days", "funday")], [("minutes", "60"), ("days", String(repeating: "mon,", count: 40))],
            [("minutes", "60"), ("entries", (1...33).map { "e\($0).example.com" }.joined(separator: ","))],
            [("minutes", "60"), ("entries", String(repeating: "a", count: 300) + ".com")],
        ]
        for fields in hostile {
            let answer = try owner.post("/owner/allowance", [("csrf", token), ("profile", "kid")] + fields)
            #expect(answer.status == 400, "\(fields.map { "\($0.0)=\($0.1.prefix(40))" }): \(answer.status)")
        }
        // Another profile the owner's uid may not supervise, and no CSRF token.
        #expect(try owner.post("/owner/allowance", [("csrf", token), ("profile", "parent"), ("minutes", "60")]).status == 403)
        #expect(try owner.post("/owner/allowance", [("profile", "kid"), ("minutes", "60")]).status == 403)
        #expect(try Self.kidAllowances(helper).count == 1, "only the file's allowance")
        // An entry that is not a service, in the CLI's words.
        let unknown = try owner.post("/owner/allowance", [("csrf", token), ("profile", "kid"), ("minutes", "60"), ("entries", "youtub")])
        #expect(unknown.status == 404 && unknown.body.contains("not a service"), "\(unknown.status)")

        // Any entry, 45 minutes on weekdays: set through the engine, shown with today's words.
        let set = try owner.post("/owner/allowance", [("csrf", token), ("profile", "kid"), ("minutes", "45"), ("days", "weekdays")])
        #expect(set.status == 303)
        let any = try #require(try Self.kidAllowances(helper).first { ($0["entries"] as? [String])?.isEmpty == true })
        #expect(any["seconds_by_weekday"] as? [Int] == [0, 2700, 2700, 2700, 2700, 2700, 0])
        #expect(Self.kidSection(try owner.get("/owner")).contains("Daily allowance: 45 min on weekdays for any entry"))

        // Lowering YouTube starts its cooldown; raising it again is refused as the CLI refuses it.
        #expect(try owner.post("/owner/allowance", [("csrf", token), ("profile", "kid"), ("minutes", "20"), ("entries", "youtube")]).status == 303)
        let raised = try owner.post("/owner/allowance", [("csrf", token), ("profile", "kid"), ("minutes", "40"), ("entries", "youtube")])
        #expect(raised.status == 409 && raised.body.contains("data-rule=\"cooldown\""), "\(raised.status)")
        let cli = try helper.cli(["allowance", "set", "40m", "--entries", "youtube", "--profile", "kid"])
        #expect(cli.exitCode != 0)

        // Clear takes it away (a tightening, always allowed).
        #expect(try owner.post("/owner/allowance/clear", [("csrf", token), ("profile", "kid"), ("entries", "youtube")]).status == 303)
        let left = try Self.kidAllowances(helper)
        #expect(left.count == 1 && (left.first?["entries"] as? [String])?.isEmpty == true, "\(left)")
        // The member's page shows what is left today, with no owner's buttons.
        let member = try helper.device("127.0.0.2").get("/")
        #expect(member.body.contains("Daily allowance: 45 min on weekdays for any entry"), "\(member.body)")
        #expect(!member.body.contains("/owner/allowance") && !member.body.contains("/owner/pause"))
        // Recorded as the owner's rule changes (SPEC §12).
        let events = try helper.cli(["events", "--profile", "kid", "--json"]).output
        #expect(events.contains("web owner \(HouseholdHelper.ownerName)"))
    }

    /// The owner's Pause and Resume buttons (SPEC §5a): a forged length is refused, a pause shows
    /// on the member's page with its reason, Resume lifts it; every owner's supervision form needs
    /// the session's CSRF token.
    @Test func an_owners_pause_shows_on_the_members_page_and_resume_lifts_it() throws {
        let scratch = try Scratch()
        let helper = try HouseholdHelper(scratch: scratch, ownerPassword: true)
        let owner = helper.device("127.0.0.3"), kid = helper.device("127.0.0.2")
        let signIn = try #require(try owner.get("/signin").csrf)
        #expect(try owner.post("/signin", [("csrf", signIn), ("name", HouseholdHelper.ownerName), ("password", HouseholdHelper.ownerPassword)]).status == 303)
        let page = try owner.get("/owner")
        let token = try #require(page.csrf)
        #expect(Self.kidSection(page).contains(#"action="/owner/pause""#), "a Pause button for the kid")
        for path in ["/owner/pause", "/owner/resume", "/owner/allowance", "/owner/allowance/clear"] {
            #expect(try owner.post(path, [("profile", "kid"), ("minutes", "5")]).status == 403, "\(path) without the CSRF token")
        }
        for minutes in ["0", "-1", "10081", "99999999999999999999", "4.5", ""] {
            #expect(try owner.post("/owner/pause", [("csrf", token), ("profile", "kid"), ("minutes", minutes)]).status == 400, "minutes=\(minutes)")
        }
        #expect(!(try kid.get("/").body.contains("Paused until")))
        #expect(try owner.post("/owner/pause", [("csrf", token), ("profile", "kid"), ("minutes", "45"), ("reason", "dinner")]).status == 303)
        let paused = try kid.get("/").body
        #expect(paused.contains("Paused until") && paused.contains("“dinner”"), "\(paused)")
        #expect(!paused.contains("Resume now"), "a member cannot lift it")
        #expect(Self.kidSection(try owner.get("/owner")).contains("Resume now"))
        #expect(!(try helper.device("127.0.0.3").get("/").body.contains("Paused until")), "the parent's profile is not paused")
        #expect(try owner.post("/owner/resume", [("csrf", token), ("profile", "kid")]).status == 303)
        #expect(!(try kid.get("/").body.contains("Paused until")))
    }
}
