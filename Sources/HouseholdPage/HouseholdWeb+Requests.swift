import ControlAPI
import Engine
import Foundation
import Hummingbird
import ScrollOffCore

/// Asking for time and granting it (SPEC §9a): a member asks from their device; an owner
/// answers on their page or with `scrolloff requests`, and grants or takes minutes (`adjust`), through
/// the engine calls the control routes use (HouseholdRoutes).
///
/// | Page | Route |
/// |---|---|
/// | member: ask for N minutes with a note | POST /ask |
/// | owner: approve or decline a request | POST /owner/requests |
/// | owner: grant or take minutes | POST /owner/adjust |
extension HouseholdWeb {

    func addHousehold(to router: Router<WebContext>) {
        router.post("/ask") { request, context in try await ask(request, context) }
        router.post("/owner/requests") { request, context in try await answer(request, context) }
        router.post("/owner/adjust") { request, context in try await adjust(request, context) }
    }

    func addMemberHousehold(to view: inout [String: Any], profile: String) async {
        view["asking"] = ProfileRole.member.allows(.ask)
        let now = await engine.trustedNow()
        view["requests"] = await engine.recentTimeRequests(profile: profile, now: now).map { request -> [String: Any] in
            var item: [String: Any] = ["minutes": "\(request.seconds / 60)", "status": request.status.rawValue]
            if !request.note.isEmpty { item["note"] = request.note }
            let by = request.answeredBy.map { " by \($0)" } ?? ""
            switch request.status {
            case .pending: item["statusWords"] = "waiting for an owner"
            case .approved: item["statusWords"] = "approved\(by), added to your balance"
            case .declined where request.answeredBy == HelperEngine.requestExpiryAuthor:
                item["statusWords"] = "expired, no owner answered within 24 h"
            case .declined: item["statusWords"] = "declined\(by)"
            }
            if let note = request.answerNote, request.answeredBy != HelperEngine.requestExpiryAuthor { item["answerNote"] = note }
            return item
        }
    }

    func addOwnerHousehold(to view: inout [String: Any], profile: String, now: Instant, grants: Bool) async {
        view["adjusting"] = grants
        guard grants else { return }
        view["requests"] = await engine.timeRequests(profile: profile).filter { $0.status == .pending }.map { request -> [String: Any] in
            var item: [String: Any] = ["id": "\(request.id)", "profile": profile, "minutes": "\(request.seconds / 60)", "who": profile,
                                       "asked": "asked at " + TimeWords.clock(request.created, now: now)]
            if !request.note.isEmpty { item["note"] = request.note }
            return item
        }
    }

    /// A member asks for time for their device's profile, never another.
    func ask(_ request: Request, _ context: WebContext) async throws -> Response {
        let (session, form) = try await checkedPost(request, context)
        try await memberMay(.ask, context)
        let profile = deviceProfile(context)
        // Bounded before `* 60` (a huge number would overflow and trap the helper), by the same
        // range as the control API's `seconds` of a request (1 min to a day).
        let asking: RequestedSeconds
        do throws(WireRangeError) { asking = try RequestedSeconds(minutes: form["minutes"] ?? "") } catch {
            throw WebFailure(.badRequest, "Say how many minutes you would like, such as 15: \(error)")
        }
        do {
            let asked = try await engine.requestTime(profile: profile, seconds: asking.seconds, note: form["note"] ?? "")
            await sessions.setFlash(session.id, "Asked for \(asked.seconds / 60) min. An owner sees it on their page; the answer shows here.")
            return WebResponses.redirect("/")
        } catch {
            return await failurePage(error, session: session, cookie: nil, back: "/")
        }
    }

    /// An owner answers a request. Who may answer is decided on the request's own profile, not on
    /// anything the form says.
    func answer(_ request: Request, _ context: WebContext) async throws -> Response {
        let (session, form) = try await checkedPost(request, context)
        let owner = try owner(of: session)
        guard let id = try? WireID.parse(form["id"], what: "a request id", listing: "The owner's page"),
              let asked = await engine.timeRequests(profile: nil).first(where: { $0.id == id }) else {
            throw WebFailure(.notFound, "There is no such request; reload the page to see the ones waiting.")
        }
        _ = try await authorized(owner, asked.profile, .grant)
        let approve = form["answer"] == "approve"
        do {
            let result = try await engine.answerTimeRequest(id: id, approve: approve, answeredBy: owner.name, note: form["note"])
            await sessions.setFlash(session.id, result.message)
            return WebResponses.redirect("/owner")
        } catch {
            return await failurePage(error, session: session, cookie: nil, back: "/owner")
        }
    }

    /// An owner grants (+) or takes (−) minutes: one ledger `adjust` row with the note.
    func adjust(_ request: Request, _ context: WebContext) async throws -> Response {
        let (session, form) = try await checkedPost(request, context)
        let owner = try owner(of: session)
        let profile = try await authorized(owner, form["profile"], .grant)
        // Bounded as the control API's `seconds` of `adjust`, sign included, before any arithmetic.
        let change: AdjustmentSeconds
        do throws(WireRangeError) { change = try AdjustmentSeconds(minutes: form["minutes"] ?? "", negative: form["sign"] == "-") } catch {
            throw WebFailure(.badRequest, "Say how many minutes, such as 15: \(error)")
        }
        do {
            let result = try await engine.adjust(profile: profile, seconds: change.seconds, note: form["note"] ?? "", by: owner.name)
            await sessions.setFlash(session.id, "\(profile): \(result.message)")
            return WebResponses.redirect("/owner")
        } catch {
            return await failurePage(error, session: session, cookie: nil, back: "/owner")
        }
    }
}
