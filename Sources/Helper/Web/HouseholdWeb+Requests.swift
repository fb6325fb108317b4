import Foundation
import Hummingbird
import ScrollOffCore

/// Asking for time and granting it (SPEC §9a). Wired to the engine's household calls once they
/// exist; until then the page offers neither.
extension HouseholdWeb {
    func addHousehold(to router: Router<WebContext>) {}

    func addMemberHousehold(to view: inout [String: Any], profile: String) async {}

    func addOwnerHousehold(to view: inout [String: Any], profile: String, now: Instant) async {}
}
