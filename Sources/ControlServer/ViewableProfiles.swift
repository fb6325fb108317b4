import ControlAPI
import Engine

/// The profiles a caller may view (SPEC §9a: a member never sees another profile), for
/// the answers that span profiles (`export`): the one `ControlAuthorizer` decides each, as the
/// router decides a single `?profile=`. Root and the helper's own user see every profile.
enum ViewableProfiles {
    static func of(_ caller: CallerIdentity, engine: HelperEngine, authorizer: any ControlAuthorizer) async -> Set<String> {
        let access = await engine.profileAccess()
        return Set(access.compactMap { name, a in
            authorizer.decide(caller, profile: name, access: a, action: .view) == .allowed ? name : nil
        })
    }
}
