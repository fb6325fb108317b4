import ControlAPI
import Engine
import Foundation
import Hummingbird
import ScrollOffCore

/// An owner's Pause and Resume on the household page (SPEC §5a, §9a) and the daily allowances shown
/// with each profile (SPEC §4a), through the engine calls the control routes use (SupervisionRoutes).
/// The template is its own partial, `supervision` (WebTemplates+Supervision.swift).
///
/// | Page | Route |
/// |---|---|
/// | owner: pause a profile for N minutes, with a reason | POST /owner/pause |
/// | owner: resume it now | POST /owner/resume |
/// | owner: give entries (or any) N minutes a day on some days | POST /owner/allowance |
/// | owner: clear an allowance | POST /owner/allowance/clear |
extension HouseholdWeb {
    func addPause(to router: Router<WebContext>) {
        router.post("/owner/pause") { request, context in try await ownerPause(request, context, pause: true) }
        router.post("/owner/resume") { request, context in try await ownerPause(request, context, pause: false) }
        router.post("/owner/allowance") { request, context in try await ownerAllowance(request, context, clear: false) }
        router.post("/owner/allowance/clear") { request, context in try await ownerAllowance(request, context, clear: true) }
    }

    /// The longest days field and entry word: far past what a person types (an entry is at most a
    /// domain name, 253 characters), so a forged form is refused before anything is resolved. The
    /// number of entries is the engine's own bound, `Allowance.mostEntries`.
    static let allowanceDaysLongest = 64
    static let allowanceWordLongest = 253

    /// What the `supervision` partial shows of one profile: its pause, and its allowances with
    /// what is left today. The buttons only for an owner who may pause it.
    func addSupervision(to view: inout [String: Any], status: StatusReport, supervising: Bool) {
        view["supervising"] = supervising
        if let pause = status.pause, let until = pause.pausedUntil {
            var paused: [String: Any] = ["until": TimeWords.until(until, now: status.now)]
            if let reason = pause.reason { paused["reason"] = reason }
            view["paused"] = paused
        }
        view["allowances"] = (status.allowances ?? []).map { a -> [String: Any] in
            ["words": a.words, "left": a.allowanceLeftSeconds.map { "\(TimeWords.span(seconds: $0)) left today" } ?? "none today",
             "entries": a.entries.joined(separator: ",")]
        }
    }

    /// `scrolloff allowance set|clear` from the page (SPEC §4a), through the same engine calls as
    /// the control routes: raising meets the cooldowns and locks there, and the refusal is shown
    /// as any other. Minutes, entries and days are bounded here before the engine sees them.
    func ownerAllowance(_ request: Request, _ context: WebContext, clear: Bool) async throws -> Response {
        let (session, form) = try await checkedPost(request, context)
        let owner = try owner(of: session)
        let profile = try await authorized(owner, form["profile"], .supervise)
        let entries = (form["entries"] ?? "").split(whereSeparator: { $0 == "," || $0 == " " }).map(String.init)
        guard entries.count <= Allowance.mostEntries, entries.allSatisfy({ $0.utf8.count <= Self.allowanceWordLongest }) else {
            throw WebFailure(.badRequest, "Name at most \(Allowance.mostEntries) entries, each a service, category or domain of at most \(Self.allowanceWordLongest) characters, separated by commas.")
        }
        let daysText = form["days"].flatMap { $0.isEmpty ? nil : $0 }
        var days: Weekdays?
        if let daysText {
            do throws(ScheduleError) {
                guard daysText.utf8.count <= Self.allowanceDaysLongest else { throw ScheduleError.invalidDays(String(daysText.prefix(Self.allowanceDaysLongest)) + "…") }
                days = try Weekdays.parse(daysText)
            } catch {
                throw WebFailure(.badRequest, "days: \(error.message)")
            }
        }
        var length: AllowanceSeconds?
        if !clear {
            // Bounded as the control API's `seconds` of `allowance set` before any arithmetic.
            do throws(WireRangeError) { length = try AllowanceSeconds(minutes: form["minutes"] ?? "") } catch {
                throw WebFailure(.badRequest, "Say how many minutes a day, such as 60: \(error)")
            }
        }
        return await ChangeActor.$current.withValue("web owner \(owner.name) (uid \(owner.uid))") {
            do throws(EngineError) {
                let result = if let length {
                    try await engine.setAllowance(seconds: length.seconds, entries: entries, days: days ?? .daily, profile: profile)
                } else {
                    try await engine.clearAllowance(entries: entries, days: days, profile: profile)
                }
                await sessions.setFlash(session.id, "\(profile): \(result.message)")
                return WebResponses.redirect("/owner")
            } catch {
                return await failurePage(error, session: session, cookie: nil, back: "/owner")
            }
        }
    }

    /// Pausing only tightens; resuming is an owner's tool over someone else's devices, with no
    /// cooldown (SPEC §5a). Who may is decided on the form's profile by the owner's own role.
    func ownerPause(_ request: Request, _ context: WebContext, pause: Bool) async throws -> Response {
        let (session, form) = try await checkedPost(request, context)
        let owner = try owner(of: session)
        let profile = try await authorized(owner, form["profile"], .supervise)
        var length: PauseSeconds?
        if pause {
            // Bounded as the control API's `seconds` of `pause` before any arithmetic.
            do throws(WireRangeError) { length = try PauseSeconds(minutes: form["minutes"] ?? "") } catch {
                throw WebFailure(.badRequest, "Say how many minutes to pause, such as 45: \(error)")
            }
        }
        let reason = form["reason"].flatMap { $0.isEmpty ? nil : $0 }
        return await ChangeActor.$current.withValue("web owner \(owner.name) (uid \(owner.uid))") {
            do throws(EngineError) {
                let result = pause
                    ? try await engine.pause(profile: profile, for: length.map { .seconds($0.seconds) }, reason: reason)
                    : try await engine.resume(profile: profile)
                await sessions.setFlash(session.id, "\(profile): \(result.message)")
                return WebResponses.redirect("/owner")
            } catch {
                return await failurePage(error, session: session, cookie: nil, back: "/owner")
            }
        }
    }
}
