import ControlAPI
import Engine
import ServiceKit

/// Who may remove a list (SPEC §11). Lists are the household's, and removing one opens its names
/// in every profile whose rules name it, so the caller must be allowed to edit each of those, not
/// only the profile the request names (a member of an ownerless profile could otherwise open a
/// list that a child's profile blocks).
///
/// Returns the profiles it checked. The removal's commit refuses it when by then another profile
/// names the list (`HelperEngine.removeListSource(_:checkedProfiles:)`): a block another helper
/// committed between this check and that commit was not asked about.
enum ListRemovalAccess {
    static func check(_ request: ControlRequest, list: String, engine: HelperEngine,
                      access: @Sendable () async -> [String: ProfileAccess], authorizer: any ControlAuthorizer) async throws(ControlFailure) -> Set<String> {
        let all = await access()
        let naming = await engine.profilesNamingList(list)
        for profile in naming where profile != request.profile {
            let decision = authorizer.decide(request.caller, profile: profile, access: all[profile] ?? ProfileAccess(), action: .edit)
            guard var failure = ControlFailure(decision) else { continue }
            failure.error.message = "Profile \(profile) blocks the list \(list), so removing it would open its names there, "
                + "and you may not change \(profile)'s rules. " + failure.error.message
            throw failure
        }
        return Set(naming + [request.profile])
    }
}
