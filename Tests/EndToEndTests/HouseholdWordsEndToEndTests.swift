import Foundation
import Testing

/// Every word true: what the household page says and offers, against the real helper.
/// One helper serves every case (the clock stands at tomorrow 12:00 UTC, so "21:30" is later today).
@Suite("Household page: every word true", .serialized)
struct HouseholdWordsEndToEndTests {
    /// Tomorrow (later than any build date, so the helper trusts the clock, SPEC §11) at `time` UTC.
    static func tomorrow(_ time: String) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd"
        return formatter.string(from: Date().addingTimeInterval(86_400)) + " " + time
    }

    /// The household of one test: kid's instagram blocked around the clock with a curfew at 21:30
    /// after it, a focus session on tiktok, a plan that fits tiktok only, reddit only scheduled.
    static func household(_ scratch: Scratch) throws -> HouseholdHelper {
        let helper = try HouseholdHelper(scratch: scratch, ownerPassword: true,
                                         environment: FakeClock.allClocks(startingAt: tomorrow("12:00:00")).merging(["TZ": "UTC"]) { $1 })
        for arguments in [
            ["block", "instagram", "--profile", "kid", "--reason", "homework first"],
            ["schedule", "add", "night", "--profile", "kid", "--curfew", "--from", "21:30", "--to", "07:00", "--entries", "instagram"],
            ["schedule", "add", "evenings", "--profile", "kid", "--from", "18:00", "--to", "20:00", "--entries", "reddit"],
            ["focus", "45m", "--profile", "kid", "--entries", "tiktok", "--reason", "revising for the test"],
            ["plan", "add", "--profile", "kid", "--when", "TikTok pulls me in", "--then", "text a friend"],
        ] {
            let outcome = try helper.cli(arguments)
            #expect(outcome.exitCode == 0, "\(arguments): \(outcome)")
        }
        return helper
    }

    /// Signs the owner in on the parent's device and returns the owner's page.
    static func ownerPage(_ helper: HouseholdHelper) throws -> (WebDevice, WebAnswer) {
        let parent = helper.device("127.0.0.3")
        let signin = try parent.get("/signin")
        let token = try #require(signin.csrf)
        let signed = try parent.post("/signin", [("csrf", token), ("name", HouseholdHelper.ownerName), ("password", HouseholdHelper.ownerPassword)])
        #expect(signed.status == 303, "\(signed)")
        return (parent, try parent.get("/owner"))
    }

    /// An around-the-clock block that a curfew follows says "then curfew at 21:30", as the
    /// CLI does, never "until 21:30"; a focus session and its reason are on the page (with
    /// what it allows).
    @Test func the_page_says_a_curfew_follows_the_block_and_shows_the_focus_session_and_what_it_allows() throws {
        let scratch = try Scratch()
        let helper = try Self.household(scratch)
        let page = try helper.device("127.0.0.2").get("/")
        let instagram = try #require(Self.element(page.body, id: "entry-instagram"), "\(page.body)")
        #expect(instagram.contains("then curfew at 21:30"), "\(instagram)")
        #expect(!instagram.contains("until 21:30"), "\(instagram)")
        let cli = try helper.cli(["status", "--profile", "kid"])
        #expect(cli.output.contains("then curfew at 21:30"), "\(cli)")
        let focus = try #require(Self.element(page.body, id: "focus"), "no focus card: \(page.body)")
        #expect(focus.contains("tiktok") && focus.contains("until 12:45") && focus.contains("revising for the test"), "\(focus)")
        #expect(focus.contains("cannot be ended early") && focus.contains("peek"), "what a focus session allows: \(focus)")
        let plans = try helper.device("127.0.0.2").get("/plans")
        #expect(plans.body.contains("cannot be ended early") && plans.body.contains("peeks"), "\(plans.body)")
    }

    /// The owner's page starts with what needs an answer, with a count,
    /// and who is in curfew now; each profile's long forms are folded.
    @Test func the_owner_page_leads_with_pending_requests_and_folds_the_long_forms() throws {
        let scratch = try Scratch()
        let helper = try Self.household(scratch)
        let kid = helper.device("127.0.0.2")
        let token = try #require(try kid.get("/").csrf)
        #expect(try kid.post("/ask", [("csrf", token), ("minutes", "15"), ("note", "science project")]).status == 303)
        let (_, owner) = try Self.ownerPage(helper)
        let body = owner.body
        let waiting = try #require(body.range(of: "id=\"needs-answer\""), "no summary at the top: \(body)")
        let firstProfile = try #require(body.range(of: "id=\"profile-kid\""))
        #expect(waiting.lowerBound < firstProfile.lowerBound)
        #expect(body.contains("1 request waits for an answer"), "\(body)")
        #expect(body.contains("science project"))
        // The block, schedule and adjust forms sit inside a closed <details> of the profile.
        let section = String(body[firstProfile.lowerBound...])
        let details = try #require(section.range(of: "<details"), "\(section)")
        let blockForm = try #require(section.range(of: "action=\"/owner/block\""))
        #expect(details.lowerBound < blockForm.lowerBound)
        #expect(!section[details.lowerBound...].prefix(40).contains(" open"))
    }

    /// A member with a plan that fits another moment is not told "No plan yet".
    @Test func the_moment_says_no_plan_matches_now_instead_of_no_plan_yet() throws {
        let scratch = try Scratch()
        let helper = try Self.household(scratch)
        let moment = try helper.device("127.0.0.2").get("/moment?action=peek&entry=instagram")
        #expect(moment.status == 200, "\(moment)")
        #expect(!moment.body.contains("No plan yet"), "\(moment.body)")
        #expect(moment.body.contains("1 plan, none matches now"), "\(moment.body)")
    }

    /// With 0 tokens the page offers no token and no exercise for one; an entry with no
    /// around-the-clock block has no Unblock button; the token refusal offers "Ask for time", not the configuration.
    @Test func the_page_offers_nothing_that_will_be_refused() throws {
        let scratch = try Scratch()
        let helper = try Self.household(scratch)
        let kid = helper.device("127.0.0.2")
        let page = try kid.get("/")
        let instagram = try #require(Self.element(page.body, id: "entry-instagram"))
        #expect(!instagram.contains("action=token"), "a token offered with 0 left: \(instagram)")
        #expect(instagram.contains("action=peek"))
        let token = try kid.get("/moment?action=token&entry=instagram")
        #expect(!token.body.contains("Start the exercise"), "\(token.body)")
        #expect(token.body.contains("No emergency tokens left") && token.body.contains("Ask for time"), "\(token.body)")
        // The token's page offers no form; the home page's token is the session's.
        let csrf = try #require(try kid.get("/").csrf)
        let refused = try kid.post("/bypass", [("csrf", csrf), ("action", "token"), ("entry", "instagram")])
        #expect(refused.status == 409)
        #expect(!refused.body.contains("To have some, set") && refused.body.contains("Ask an owner for time"), "\(refused.body)")
        #expect(refused.body.contains("href=\"/#ask\""), "\(refused.body)")

        let (_, owner) = try Self.ownerPage(helper)
        let kidSection = String(owner.body[try #require(owner.body.range(of: "id=\"profile-kid\"")).lowerBound...])
        let reddit = try #require(Self.element(kidSection, tag: "li", containing: "<strong>reddit</strong>"), "\(kidSection)")
        #expect(!reddit.contains("Unblock"), "\(reddit)")
        let blocked = try #require(Self.element(kidSection, tag: "li", containing: "<strong>instagram</strong>"))
        #expect(blocked.contains("Unblock"))
    }

    /// After a peek the entry rests for twice the peek's length (SPEC §5): the page offers no
    /// peek then and says when it opens. The clock runs 20 times fast, so the 60 s peek is over
    /// in 3 s and the 2 min rest is under way.
    @Test func a_resting_entry_offers_no_peek_and_says_when_peeks_open_again() throws {
        let scratch = try Scratch()
        let helper = try HouseholdHelper(scratch: scratch,
                                         environment: FakeClock.allClocks(startingAt: Self.tomorrow("12:00:00") + " x20").merging(["TZ": "UTC"]) { $1 })
        #expect(try helper.cli(["block", "instagram", "--profile", "kid"]).exitCode == 0)
        #expect(try helper.cli(["peek", "instagram", "--profile", "kid"]).exitCode == 0)
        let kid = helper.device("127.0.0.2")
        var resting = ""
        // Bounded: 20 tries, 0.5 s apart (200 s of the fast clock, more than the peek and its rest).
        for _ in 0..<20 {
            resting = Self.element(try kid.get("/").body, id: "entry-instagram") ?? ""
            if resting.contains("data-state=\"blocked\"") { break }
            usleep(500_000)
        }
        #expect(resting.contains("data-state=\"blocked\""), "\(resting)")
        #expect(!resting.contains("action=peek"), "a peek offered while the entry rests: \(resting)")
        #expect(resting.contains("peeks again at 12:0"), "\(resting)")
    }

    /// A wrong owner password shows the sign-in form again with the
    /// error and the name typed, not a bare page with one button.
    @Test func a_wrong_owner_password_shows_the_form_again_with_the_error() throws {
        let scratch = try Scratch()
        let helper = try HouseholdHelper(scratch: scratch, ownerPassword: true)
        let parent = helper.device("127.0.0.3")
        let signin = try parent.get("/signin")
        let wrong = try parent.post("/signin", [("csrf", try #require(signin.csrf)), ("name", HouseholdHelper.ownerName), ("password", "wrong")])
        #expect(wrong.status == 401)
        #expect(wrong.body.contains("do not match") && wrong.body.contains("name=\"password\""), "\(wrong.body)")
        #expect(wrong.body.contains("value=\"\(HouseholdHelper.ownerName)\""), "the name typed is kept: \(wrong.body)")
        // The form shown again works.
        let again = try parent.post("/signin", [("csrf", try #require(wrong.csrf)), ("name", HouseholdHelper.ownerName),
                                                ("password", HouseholdHelper.ownerPassword)])
        #expect(again.status == 303, "\(again)")
    }

    /// The element with `id`, from its opening tag to the next element of the same tag at its depth.
    static func element(_ html: String, id: String) -> String? {
        guard let start = html.range(of: "id=\"\(id)\"") else { return nil }
        let open = html[..<start.lowerBound].lastIndex(of: "<") ?? start.lowerBound
        let tag = String(html[html.index(after: open)...].prefix { $0.isLetter || $0.isNumber })
        return balanced(html, from: open, tag: tag)
    }

    /// The first `<tag …>…</tag>` whose text contains `needle`.
    static func element(_ html: String, tag: String, containing needle: String) -> String? {
        var search = html.startIndex
        while let open = html.range(of: "<\(tag)", range: search..<html.endIndex) {
            if let whole = balanced(html, from: open.lowerBound, tag: tag), whole.contains(needle) { return whole }
            search = open.upperBound
        }
        return nil
    }

    private static func balanced(_ html: String, from open: String.Index, tag: String) -> String? {
        var depth = 0
        var i = open
        while i < html.endIndex {
            if html[i...].hasPrefix("</\(tag)>") {
                depth -= 1
                if depth == 0 { return String(html[open..<html.index(i, offsetBy: tag.count + 3)]) }
            } else if html[i...].hasPrefix("<\(tag)"), let after = html.index(i, offsetBy: tag.count + 1, limitedBy: html.endIndex),
                      after < html.endIndex, html[after] == " " || html[after] == ">" {
                depth += 1
            }
            i = html.index(after: i)
        }
        return nil
    }
}
