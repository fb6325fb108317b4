import ControlAPI
import Engine
import Foundation
import ScrollOffCore
import ServiceKit

/// The household endpoints over `HelperEngine+Household`. Like `EngineRoutes`, each
/// acts on `?profile=` after the router's role check (`ProfileAction`); answering a request is
/// checked against the request's own profile here, since the request names it.
///
/// | Verb | Endpoint | Action |
/// |---|---|---|
/// | adjust [+\|-]DURATION --note | POST /v1/adjust | grant |
/// | ask DURATION --note | POST /v1/requests | ask |
/// | requests [--all] | GET /v1/requests[?all=true] | view (each profile listed is checked) |
/// | requests approve\|decline ID | POST /v1/requests/{id}/approve, /decline | grant, on the request's profile |
/// | profile rm NAME (root only) | DELETE /v1/profiles/{name} | administration |
enum HouseholdRoutes {
    static func add(to router: inout ControlRouter, engine: HelperEngine, authorizer: any ControlAuthorizer) {
        router.add(ControlEndpoints.adjust, action: .grant) { r, body in
            let by = GroupMembershipAuthorizer.name(of: r.caller)
            return try await engineAnswer(engine, .created) { () async throws(EngineError) in
                try await AdjustReport(engine.adjust(profile: r.profile, seconds: body.seconds.seconds, note: body.note, by: by))
            }
        }
        router.add(ControlEndpoints.askTime, action: .ask) { r, body in
            return try await engineAnswer(engine, .created) { () async throws(EngineError) in
                try await TimeRequestInfo(engine.requestTime(profile: r.profile, seconds: body.seconds.seconds, note: body.note))
            }
        }
        // Open to the router because `?all=true` is not about one profile: the handler checks
        // viewing on each profile it lists (an owner of `kids` need not be allowed on `default`).
        router.add(ControlEndpoints.timeRequests) { r in
            let access = await engine.profileAccess()
            // No profile named and not `all`: an owner's default view (SPEC §9a) is what waits for
            // their answer in every profile they may grant in, with their own profile's requests.
            if !r.query.flag(ControlQuery.all), r.query.nonEmpty(ControlQuery.profile) == nil {
                let mine = await engine.timeRequests(profile: nil).filter { request in
                    guard let a = access[request.profile] else { return false }
                    if request.status == .pending, authorizer.decide(r.caller, profile: request.profile, access: a, action: .grant) == .allowed {
                        return true
                    }
                    return request.profile == r.profile && authorizer.decide(r.caller, profile: request.profile, access: a, action: .view) == .allowed
                }
                return .ok(TimeRequestsResponse(requests: mine.map(TimeRequestInfo.init), now: await engine.trustedNow()))
            }
            guard r.query.flag(ControlQuery.all) else {
                guard let a = access[r.profile] else {
                    throw ControlFailure(EngineError.notFound("There is no profile “\(r.profile)”; profiles: \(access.keys.sorted().joined(separator: ", "))."))
                }
                if let failure = ControlFailure(authorizer.decide(r.caller, profile: r.profile, access: a, action: .view)) { throw failure }
                return .ok(TimeRequestsResponse(requests: await engine.timeRequests(profile: r.profile).map(TimeRequestInfo.init),
                                                now: await engine.trustedNow()))
            }
            let visible = await engine.timeRequests(profile: nil).filter { request in
                guard let a = access[request.profile] else { return false }
                return authorizer.decide(r.caller, profile: request.profile, access: a, action: .view) == .allowed
            }
            return .ok(TimeRequestsResponse(requests: visible.map(TimeRequestInfo.init), now: await engine.trustedNow()))
        }
        for (endpoint, approve) in [(ControlEndpoints.approveRequest, true), (ControlEndpoints.declineRequest, false)] {
            // Checked here on the request's own profile, whatever `?profile=` says.
            // The id is checked before the body is read, as it names what the body is about.
            router.add(endpoint, admit: { r throws(ControlFailure) in _ = try requestID(r) }) { r, body in
                let id = try requestID(r)
                guard let request = await engine.timeRequests(profile: nil).first(where: { $0.id == id }) else {
                    throw ControlFailure(EngineError.notFound("There is no request \(id); `scrolloff requests` lists them."))
                }
                let access = await engine.profileAccess()[request.profile] ?? ProfileAccess()
                if let failure = ControlFailure(authorizer.decide(r.caller, profile: request.profile, access: access, action: .grant)) {
                    throw failure
                }
                let by = GroupMembershipAuthorizer.name(of: r.caller)
                return try await engineAnswer(engine) { () async throws(EngineError) in
                    try await TimeRequestAnswerReport(engine.answerTimeRequest(id: id, approve: approve, answeredBy: by, note: body.note))
                }
            }
        }
        router.add(ControlEndpoints.removeProfile) { r in
            // Which profile a device follows is the administrator's call (SPEC §9, §11).
            if case .denied(let reason) = authorizer.mayManageProfiles(r.caller) { throw ControlFailure.forbidden(reason) }
            let name = r.parameters[ControlPath.name] ?? ""
            return try await engineAnswer(engine) { () async throws(EngineError) in
                DoneResponse(message: try await engine.removeProfile(name))
            }
        }
    }

    /// The `{id}` of a request path.
    private static func requestID(_ r: ControlRequest) throws(ControlFailure) -> Int64 {
        do throws(WireRangeError) { return try WireID.parse(r.parameters[ControlPath.id], what: "a request id", listing: "`scrolloff requests`") } catch {
            throw ControlFailure(error)
        }
    }
}
