import ControlAPI
import Foundation
import Hummingbird

/// An owner tightens a profile's rules with a schedule from the page (issue 13 "owner view:
/// tighten rules"), through the engine call of `scrolloff schedule add` (EngineRoutes), with the
/// right the control socket gives their uid on that profile (`edit`).
///
/// | Page | Route |
/// |---|---|
/// | owner: add a block window or curfew | POST /owner/schedules |
extension HouseholdWeb {
    func addOwnerSchedules(to router: Router<WebContext>) {
        router.post("/owner/schedules") { request, context in try await ownerSchedule(request, context) }
    }

    func ownerSchedule(_ request: Request, _ context: WebContext) async throws -> Response {
        let (session, form) = try await checkedPost(request, context)
        let owner = try owner(of: session)
        let profile = try await authorized(owner, form["profile"], .edit)
        guard let name = form["name"], let from = form["from"], let to = form["to"] else {
            throw WebFailure(.badRequest, "Give the schedule a name and its times, such as evenings from 21:00 to 07:00.")
        }
        let entries = (form["entries"] ?? "").split(whereSeparator: { $0 == "," || $0 == " " }).map(String.init)
        let reason = form["reason"].flatMap { $0.trimmingCharacters(in: .whitespaces).isEmpty ? nil : $0 }
        let body = ScheduleRequest(name: name, from: from, to: to, days: form["days"] ?? "daily", curfew: form["curfew"] == "on",
                                   entries: entries, reason: reason)
        do {
            let added = try await engine.addSchedule(body, profile: profile)
            await sessions.setFlash(session.id, "\(profile): schedule “\(added.name)” blocks \(added.entries.joined(separator: ", ")) \(added.from)–\(added.to) \(added.daysText).")
            return WebResponses.redirect("/owner")
        } catch {
            return await failurePage(error, session: session, cookie: nil, back: "/owner")
        }
    }
}
