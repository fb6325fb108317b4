import ControlAPI
import ControlServer
import Engine
import Foundation
import HTTPTypes
import Hummingbird
import ScrollOffCore

/// The rest of what a member may do for their own profile (SPEC §9a: a household member can do
/// from a phone everything the CLI lets them do for their own profile), each through the engine
/// call of the CLI verb's control route (EngineRoutes), on the device's profile only: a form's
/// `profile` field, if someone adds one, is never read.
///
/// | CLI verb | Page | Route |
/// |---|---|---|
/// | status, wallet (balance, next credit) | this device | GET / |
/// | use, peek, token, stop (with the exercise) | this device, the moment | POST /bypass, POST /stop |
/// | ask | this device | POST /ask |
/// | stats (day, week, month), events [--since], wallet's batches, schedule list, services | history | GET /history[?days=7|30|90] |
/// | export --csv (this profile's rows) | history | GET /export.csv |
/// | plan list [--all] / add / archive | plans | GET /plans, POST /plans, POST /plans/archive |
/// | alternatives list / add | plans | GET /plans, POST /alternatives |
/// | focus (only tightens) | plans | POST /focus |
extension HouseholdWeb {
    func addOwn(to router: Router<WebContext>) {
        router.get("/history") { request, context in try await historyPage(request, context) }
        router.get("/export.csv") { request, context in try await exportCSV(request, context) }
        router.get("/plans") { request, context in try await plansPage(request, context) }
        router.post("/plans") { request, context in try await addPlan(request, context) }
        router.post("/plans/archive") { request, context in try await archivePlan(request, context) }
        router.post("/alternatives") { request, context in try await addAlternative(request, context) }
        router.post("/focus") { request, context in try await focus(request, context) }
    }

    /// How far back the history page's events go by default, and the spans it offers (`scrolloff
    /// events --since`); 90 days is all the events the helper keeps (SPEC §12).
    static let historyDays: Int64 = 7
    static let historySpans: [Int64] = [7, 30, 90]
    /// The most events the page lists; the export has them all.
    static let historyEventLimit = 500

    /// `scrolloff stats`, `events`, `wallet` (its batches), `schedule list` and `services` for this
    /// device's profile.
    func historyPage(_ request: Request, _ context: WebContext) async throws -> Response {
        let (session, cookie) = await session(request)
        try await memberMay(.view, context)
        let profile = deviceProfile(context)
        let now = await engine.trustedNow()
        let days = request.uri.queryParameters.get("days").flatMap { Int64($0) }.flatMap { Self.historySpans.contains($0) ? $0 : nil }
            ?? Self.historyDays
        var view = await base(session, title: "History")
        do {
            let periods: [(String, StatsPeriod)] = [("Today", .day), ("Last 7 days", .week), ("Last 30 days", .month)]
            var stats: [[String: Any]] = []
            for (title, period) in periods {
                let s = try await engine.stats(period, profile: profile)
                stats.append([
                    "title": title, "urges": "\(s.urges)", "resisted": "\(s.urgesResisted)",
                    "protected": TimeWords.span(seconds: s.protectedSeconds), "open": TimeWords.span(seconds: s.openSeconds),
                    "earned": TimeWords.span(seconds: s.earnedSeconds), "spent": TimeWords.span(seconds: s.spentSeconds),
                    "peeks": "\(s.peeks)", "tokens": "\(s.tokens)",
                ])
            }
            view["stats"] = stats
            let wallet = WalletReport(try await engine.wallet(profile: profile))
            view["batches"] = wallet.batches.map { b -> [String: Any] in
                var item: [String: Any] = ["left": TimeWords.span(seconds: b.remainingSeconds), "origin": b.origin]
                if let day = b.earnedOn { item["earnedOn"] = day }
                if let end = b.expiresAt { item["expires"] = "expires " + TimeWords.until(end, now: now) }
                return item
            }
            view["schedules"] = try await engine.schedules(profile: profile).map(ScheduleReport.init).map { s -> [String: Any] in
                var item: [String: Any] = ["name": s.name, "from": s.from, "to": s.to, "days": s.daysText, "kind": s.kind,
                                           "entries": s.entries.joined(separator: ", "), "enabled": s.enabled]
                if let reason = s.reason, !reason.isEmpty { item["reason"] = reason }
                return item
            }
            view["services"] = try await engine.services(profile: profile).map(ServiceReport.init).map { s -> [String: Any] in
                ["id": s.id, "name": s.displayName, "state": s.state.wireName]
            }
            view["events"] = try await engine.events(since: now - .hours(24 * days), profile: profile).map(EventReport.init).reversed()
                .prefix(Self.historyEventLimit).map { e -> [String: Any] in
                    ["time": TimeWords.clock(e.time, now: now), "kind": e.kind, "message": e.message ?? e.kind]
                }
        } catch {
            return await failurePage(error, session: session, cookie: cookie, back: "/")
        }
        view["days"] = "\(days)"
        view["spans"] = Self.historySpans.map { ["days": "\($0)", "current": $0 == days] }
        return WebResponses.html(.ok, WebTemplates.render("history", view), cookie: cookie)
    }

    /// `scrolloff export --csv` for the device's profile only: its ledger rows and events, the
    /// same columns and rows as the CLI's (one store function), never another profile's.
    func exportCSV(_ request: Request, _ context: WebContext) async throws -> Response {
        let (session, cookie) = await session(request)
        try await memberMay(.view, context)
        let profile = deviceProfile(context)
        let csv: String
        do { csv = try await engine.exportCSV(profiles: [profile]) } catch {
            return await failurePage(error, session: session, cookie: cookie, back: "/history")
        }
        var headers = WebResponses.securityHeaders
        headers[.contentType] = "text/csv; charset=utf-8"
        headers[HTTPField.Name("Content-Disposition")!] = "attachment; filename=\"scrolloff-\(profile).csv\""
        if let cookie { headers[.setCookie] = cookie }
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: csv)))
    }

    /// `scrolloff plan list` and `alternatives list`, with the forms of `plan add`, `plan archive`,
    /// `alternatives add` and `focus`.
    func plansPage(_ request: Request, _ context: WebContext) async throws -> Response {
        let (session, cookie) = await session(request)
        try await memberMay(.view, context)
        let profile = deviceProfile(context)
        var view = await base(session, title: "Plans")
        let plans = await engine.planList(includeArchived: true, profile: profile).map { p -> ([String: Any], archived: Bool) in
            (["id": "\(p.id)", "when": p.when, "then": p.then, "shown": p.shownCount == 1 ? "shown once" : "shown \(p.shownCount) times"], p.archived)
        }
        view["plans"] = plans.filter { !$0.archived }.map { $0.0 }
        // `scrolloff plan list --all`: archived plans stay readable.
        view["archived"] = plans.filter { $0.archived }.map { $0.0 }
        view["hasArchived"] = plans.contains { $0.archived }
        view["alternatives"] = await engine.alternativeList(profile: profile).map { ["text": $0.text] }
        return WebResponses.html(.ok, WebTemplates.render("plans", view), cookie: cookie)
    }

    /// `scrolloff plan add "WHEN" "THEN"`.
    func addPlan(_ request: Request, _ context: WebContext) async throws -> Response {
        try await spend(request, context, back: "/plans") { form, profile in
            let plan = try await engine.addPlan(when: form["when"] ?? "", then: form["then"] ?? "", profile: profile)
            return "Saved your plan: when \(plan.when), I will \(plan.then)."
        }
    }

    /// `scrolloff plan archive ID`: only a plan of the device's profile (the engine looks it up there).
    func archivePlan(_ request: Request, _ context: WebContext) async throws -> Response {
        try await spend(request, context, back: "/plans") { form, profile in
            let id: Int64
            do throws(WireRangeError) { id = try WireID.parse(form["id"], what: "the plan to archive", listing: "Your plans page") } catch {
                throw EngineError.invalid("Choose a plan to archive: \(error)")
            }
            try await engine.archivePlan(id, profile: profile)
            return "Archived that plan. It stays in your history and is no longer shown."
        }
    }

    /// `scrolloff alternatives add TEXT`.
    func addAlternative(_ request: Request, _ context: WebContext) async throws -> Response {
        try await spend(request, context, back: "/plans") { form, profile in
            let added = try await engine.addAlternative(form["text"] ?? "", profile: profile)
            return "Added “\(added.text)” to your alternatives."
        }
    }

    /// `scrolloff focus DURATION [ENTRY…] [--reason TEXT]`: it only tightens, so a member may.
    func focus(_ request: Request, _ context: WebContext) async throws -> Response {
        try await spend(request, context, back: "/plans") { form, profile in
            let length: FocusSeconds
            do throws(WireRangeError) { length = try FocusSeconds(minutes: form["minutes"] ?? "") } catch {
                throw EngineError.invalid("Say how many minutes to focus: \(error)")
            }
            let entries = (form["entries"] ?? "").split(whereSeparator: { $0 == "," || $0 == " " }).map(String.init)
            let reason = form["reason"].flatMap { $0.trimmingCharacters(in: .whitespaces).isEmpty ? nil : $0 }
            let session = FocusReport(try await engine.focus(length: length.span, entries: entries, reason: reason, profile: profile))
            let what = session.entries.isEmpty ? "everything blockable" : session.entries.joined(separator: ", ")
            return "Focus on: \(what) is blocked until \(TimeWords.until(session.end, now: session.start))."
        }
    }

    /// A member's spending POST: the form's checks (`checkedPost`), the role, the engine call on
    /// the device's profile, then back to `back` with its message, or the refusal's page.
    private func spend(
        _ request: Request, _ context: WebContext, back: String,
        _ act: (WebForm, String) async throws -> String
    ) async throws -> Response {
        let (session, form) = try await checkedPost(request, context)
        try await memberMay(.spend, context)
        let profile = deviceProfile(context)
        do {
            let message = try await act(form, profile)
            await sessions.setFlash(session.id, message)
            return WebResponses.redirect(back)
        } catch let error as EngineError {
            return await failurePage(error, session: session, cookie: nil, back: back)
        }
    }
}
