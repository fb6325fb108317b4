import ControlAPI
import DoctorChecks
import Foundation
import Testing

/// A list whose newest copy the household's bound refused keeps its previous copy; doctor says so
/// instead of calling it fresh.
@Suite
struct DoctorListBoundTests {
    @Test func a_list_whose_refresh_passed_the_bound_warns_that_it_keeps_its_previous_copy() {
        let now = Date(timeIntervalSince1970: 1_795_003_200)
        let reason = "45 names are in force in the other lists; the new copy of list 'alpha' has 60, 105 in all, above the household's bound of 100 names ([lists] max_names)."
        let facts = DoctorListFacts(name: "alpha", lastSuccess: now.addingTimeInterval(-3 * 3600), periodSeconds: 86_400,
                                    lastError: reason, lastErrorCode: "over-bound")
        let check = DoctorVerdicts.lists([facts], now: now)[0]
        #expect(check.status == .warn, "\(check)")
        #expect(check.detail == "alpha keeps its copy from 3 h ago: " + reason)
        #expect(check.fix?.contains("[lists] max_names") == true)
        // Any other failure within the period stays a pass, as before.
        let transient = DoctorListFacts(name: "alpha", lastSuccess: now.addingTimeInterval(-3 * 3600), periodSeconds: 86_400,
                                        lastError: "HTTP 503", lastErrorCode: "http-503")
        #expect(DoctorVerdicts.lists([transient], now: now)[0].status == .pass)
    }
}
