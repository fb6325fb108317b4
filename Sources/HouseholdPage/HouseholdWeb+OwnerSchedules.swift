import ControlAPI
import ControlServer
import Engine
import Foundation
import Hummingbird
import ScrollOffCore

/// An owner tightens a profile's rules with a schedule from the page (SPEC §9a: owners may
/// tighten rules), through the engine call of `scrolloff schedule add` (EngineRoutes), and removes
/// one through the engine call of `scrolloff schedule rm`, which refuses while its cooldown or a
/// curfew's edit lock holds it (SPEC §2, §3) — the page shows that refusal's words. Both need
/// the right the control socket gives their uid on that profile (`edit`).
///
/// | Page | Route |
/// |---|---|
/// | owner: a profile's schedules, each with Remove | GET /owner |
/// | owner: add a block window or curfew | POST /owner/schedules |
/// | owner: remove a schedule (locks apply) | POST /owner/schedules/remove |
extension HouseholdWeb {
    func addOwnerSchedules(to router: Router<WebContext>) {
        router.post("/owner/schedules") { request, context in try await ownerSchedule(request, context) }
        router.post("/owner/schedules/remove") { request, context in try await ownerRemoveSchedule(request, context) }
    }

    /// A profile's schedules on the owner's page; a lock is said beside the schedule it holds.
    func ownerScheduleViews(profile: String, now: Instant) async throws -> [[String: Any]] {
        try await engine.schedules(profile: profile).map(ScheduleReport.init).map { s -> [String: Any] in
            var item: [String: Any] = ["name": s.name, "profile": profile, "from": s.from, "to": s.to, "days": s.daysText,
                                       "kind": s.kind, "entries": s.entries.joined(separator: ", ")]
            if let reason = s.reason, !reason.isEmpty { item["reason"] = reason }
            if let until = s.lockedUntil, until > now { item["locked"] = "locked until " + TimeWords.until(until, now: now) }
            return item
        }
    }

    /// Loosening: the same engine call as `scrolloff schedule rm`, so the same cooldown and edit lock
    /// refuse it, with the same words; the rule change and a refusal name the signed-in owner.
    func ownerRemoveSchedule(_ request: Request, _ context: WebContext) async throws -> Response {
        let (session, form) = try await checkedPost(request, context)
        let owner = try owner(of: session)
        let profile = try await authorized(owner, form["profile"], .edit)
        guard let name = form["name"], !name.isEmpty else { throw WebFailure(.badRequest, "Name the schedule to remove.") }
        return await ChangeActor.$current.withValue("web owner \(owner.name) (uid \(owner.uid))") {
            do throws(EngineError) {
                try await engine.removeSchedule(name, profile: profile)
                await sessions.setFlash(session.id, "\(profile): removed the schedule “\(name)”.")
                return WebResponses.redirect("/owner")
            } catch {
                return await failurePage(error, session: session, cookie: nil, back: "/owner")
            }
        }
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
                                   strict: form["strict"] == "on", entries: entries, reason: reason)
        do {
            let added = ScheduleReport(try await engine.addSchedule(body, profile: profile))
            await sessions.setFlash(session.id, "\(profile): schedule “\(added.name)” blocks \(added.entries.joined(separator: ", ")) \(added.from)–\(added.to) \(added.daysText).")
            return WebResponses.redirect("/owner")
        } catch {
            return await failurePage(error, session: session, cookie: nil, back: "/owner")
        }
    }
}
