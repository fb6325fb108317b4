import ControlAPI
@testable import DoctorChecks
import Foundation
import Testing

/// `doctor`'s hosts-mode verdicts (SPEC §10) from facts alone.
struct DoctorHostsVerdictTests {
    static let now = Date(timeIntervalSince1970: 1_795_000_000)

    @Test func users_own_line_for_a_blocked_name_fails_the_hosts_check_naming_the_line_and_the_fix() {
        var facts = DoctorHostsFacts(path: "/etc/hosts", dnsToo: false, names: 40)
        facts.userLines = [DoctorHostsLine(number: 44, text: "1.2.3.4 instagram.com", names: ["instagram.com"])]
        let check = DoctorVerdicts.hosts(facts, now: Self.now)
        #expect(check.status == .fail)
        #expect(check.detail.contains("line 44 (`1.2.3.4 instagram.com`)") && check.detail.contains("multi on"), "\(check)")
        #expect(check.fix?.contains("never edits a line outside its section") == true, "\(check)")
    }

    @Test func restored_edits_are_counted_in_a_passing_hosts_check() {
        var facts = DoctorHostsFacts(path: "/etc/hosts", dnsToo: false, names: 2)
        facts.restoredEdits = 3
        facts.lastRestored = Self.now
        let check = DoctorVerdicts.hosts(facts, now: Self.now)
        #expect(check.status == .pass)
        #expect(check.detail.contains("3 hand edits of the section put back"), "\(check)")
    }

    @Test func strict_curfew_warns_in_hosts_mode_only_and_a_warning_does_not_fail_the_report() throws {
        var facts = DoctorHostsFacts(path: "/etc/hosts", dnsToo: false, names: 907)
        #expect(DoctorVerdicts.hostsStrictCurfew(facts) == nil, "no strict curfew, nothing to say")
        facts.strictCurfew = true
        let ahead = try #require(DoctorVerdicts.hostsStrictCurfew(facts))
        #expect(ahead.status == .warn && ahead.detail.contains("While it runs"), "\(ahead)")
        facts.strictCurfewInForce = true
        let now = try #require(DoctorVerdicts.hostsStrictCurfew(facts))
        #expect(now.detail.contains("It is in force now") && now.detail.contains("907 names"), "\(now)")
        #expect(now.fix?.contains("--mode both") == true)
        facts.dnsToo = true
        #expect(DoctorVerdicts.hostsStrictCurfew(facts) == nil, "with the sinkhole too, DNS blocks everything")
        #expect(DoctorReport(checks: [.pass("helper", "up"), now]).ok)
        #expect(!DoctorReport(checks: [now, .fail("hosts", "x", fix: "y")]).ok)
    }

    @Test func facts_from_an_older_helper_without_the_new_fields_still_decode() throws {
        let json = #"{"path":"/etc/hosts","dns_too":false,"names":3,"attempts":0}"#
        let facts = try JSONDecoder().decode(DoctorHostsFacts.self, from: Data(json.utf8))
        #expect(facts.userLines.isEmpty && facts.restoredEdits == 0 && !facts.strictCurfew)
    }
}
