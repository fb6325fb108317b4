@testable import Config
import Engine
import Foundation
import Testing

/// `[[allowances]]` (SPEC §4a): an owner's daily allowances in the file, in the words of
/// `scrolloff allowance set`, and every hostile value refused with its key, line and what is allowed.
@Suite("[[allowances]]: daily allowances in the file")
struct AllowanceSectionTests {
    static let kids = "[[profiles]]\nname = \"kids\"\nclients = [\"192.168.1.64/26\"]\n"

    @Test func weekdays_and_weekends_for_the_same_entries_combine_into_one_allowance() throws {
        let c = try parse(Self.kids + """
            [[allowances]]
            profile = "kids"
            entries = ["YouTube"]
            amount = "1h"
            days = "weekdays"
            [[allowances]]
            profile = "kids"
            entries = ["youtube"]
            amount = "2h"
            days = "weekends"
            [[allowances]]
            amount = "30min"
            """)
        #expect(c.allowances == [
            ConfiguredAllowance(profile: "kids", entries: ["youtube"], secondsByWeekday: [7200, 3600, 3600, 3600, 3600, 3600, 7200]),
            ConfiguredAllowance(profile: "default", entries: [], secondsByWeekday: Array(repeating: 1800, count: 7)),
        ])
        #expect(try parse("").allowances.isEmpty)
    }

    @Test(arguments: [
        // Negative, huge, zero, of the wrong type.
        ("amount = \"-1h\"", "allowances[1].amount", "1s to 24h"),
        ("amount = \"25h\"", "allowances[1].amount", "1s to 24h"),
        ("amount = \"999999999999d\"", "allowances[1].amount", "1s to 24h"),
        ("amount = \"0s\"", "allowances[1].amount", "1s to 24h"),
        ("amount = -3600", "allowances[1].amount", "1s to 24h"),
        ("amount = 1e9", "allowances[1].amount", "1s to 24h"),
        // An unknown weekday, an empty one, a day given twice.
        ("amount = \"1h\"\ndays = \"funday\"", "allowances[1].days", "mon,wed,fri"),
        ("amount = \"1h\"\ndays = \"\"", "allowances[1].days", "mon,wed,fri"),
        // A profile no table names.
        ("profile = \"kidz\"\namount = \"1h\"", "allowances[1].profile", "[[profiles]]"),
        ("profile = 7\namount = \"1h\"", "allowances[1].profile", "[[profiles]]"),
        // Entries: not a name, too long, the wrong type, unknown to the catalog.
        ("entries = [\"../etc/passwd\"]\namount = \"1h\"", "allowances[1].entries[1]", "services, categories"),
        ("entries = [\"you tube\"]\namount = \"1h\"", "allowances[1].entries[1]", "services, categories"),
        ("entries = [\"\(String(repeating: "a", count: 300)).com\"]\namount = \"1h\"", "allowances[1].entries[1]", "services, categories"),
        ("entries = [1]\namount = \"1h\"", "allowances[1].entries[1]", "services, categories"),
        ("entries = \"youtube\"\namount = \"1h\"", "allowances[1].entries", "services, categories"),
        ("entries = [\"youtub\"]\namount = \"1h\"", "allowances[1].entries[1]", "scrolloff services"),
        // More entries than one allowance may name (Allowance.mostEntries).
        ("entries = [\((0...32).map { "\"site\($0).example\"" }.joined(separator: ", "))]\namount = \"1h\"", "allowances[1].entries", "services, categories"),
        // An unknown key and a missing amount.
        ("amout = \"1h\"", "allowances[1].amout", "amount"),
        ("days = \"daily\"", "allowances[1].amount", "1s to 24h"),
    ])
    func a_hostile_value_is_refused_with_its_key_line_and_what_is_allowed(_ body: String, _ key: String, _ allowed: String) {
        let found = problems(Self.kids + "[[allowances]]\n" + body + "\n")
        #expect(found.contains { $0.key == key && $0.line != nil && ($0.allowed ?? "").contains(allowed) }, "\(found)")
    }

    @Test func a_day_two_tables_give_the_same_entries_is_refused_naming_the_earlier_one() {
        let found = problems("[[allowances]]\namount = \"1h\"\ndays = \"weekdays\"\n[[allowances]]\namount = \"2h\"\ndays = \"fri,sat\"\n")
        #expect(found.contains { $0.key == "allowances[2].days" && $0.line == 6 && $0.problem.contains("gives fri ") && $0.problem.contains("allowances[1]") }, "\(found)")
    }

    @Test func an_unknown_service_gets_a_did_you_mean_and_a_list_of_the_file_is_a_name() throws {
        let found = problems("[[allowances]]\nentries = [\"youtub\"]\namount = \"1h\"\n")
        #expect(found.contains { $0.problem.contains("did you mean youtube") }, "\(found)")
        // A category, a domain and a [[lists.source]] of the file are entries too.
        let c = try parse("""
            [[lists.source]]
            name = "homework-breaks"
            url = "https://lists.example.org/breaks.txt"
            [[allowances]]
            entries = ["video", "news.example.com", "homework-breaks"]
            amount = "45min"
            """)
        #expect(c.allowances.first?.entries == ["homework-breaks", "news.example.com", "video"])
    }

    @Test func check_config_lists_the_files_allowances_in_the_words_of_allowance_list() throws {
        let scratch = try Scratch()
        let file = try scratch.file("scrolloff.toml", Self.kids + "[dns]\nupstreams = [\"192.0.2.53\"]\n"
            + "[[allowances]]\nprofile = \"kids\"\nentries = [\"youtube\"]\namount = \"1h\"\ndays = \"weekdays\"\n"
            + "[[allowances]]\nprofile = \"kids\"\nentries = [\"youtube\"]\namount = \"2h\"\ndays = \"weekends\"\n")
        let run = try CheckConfigTests.checkConfig(["--config", file])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("daily allowance of kids: 1 h on weekdays, 2 h at weekends for youtube"), "\(run.stdout)")
    }

    @Test func check_config_refuses_a_hostile_allowance_with_its_line_and_exit_1() throws {
        let scratch = try Scratch()
        let file = try scratch.file("scrolloff.toml", "[[allowances]]\nentries = [\"youtube\"]\namount = \"-1h\"\ndays = \"funday\"\n")
        let run = try CheckConfigTests.checkConfig(["--config", file])
        #expect(run.status == 1)
        #expect(run.stderr.contains(":3: allowances[1].amount is \"-1h\""), "\(run.stderr)")
        #expect(run.stderr.contains(":4: allowances[1].days is \"funday\""), "\(run.stderr)")
    }
}
