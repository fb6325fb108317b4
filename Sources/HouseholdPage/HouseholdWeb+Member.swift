import ControlAPI
import ControlServer
import Engine
import Foundation
import Hummingbird
import ScrollOffCore

/// The member's side (SPEC §9a): no account, the device is who they are.
extension HouseholdWeb {
    func memberPage(_ request: Request, _ context: WebContext) async throws -> Response {
        let (session, cookie) = await session(request)
        try await memberMay(.view, context)
        let profile = deviceProfile(context)
        let status: StatusReport
        let wallet: WalletReport
        let stats: StatsReport
        let week: StatsReport
        let digest: DigestReport
        do {
            status = StatusReport(try await engine.status(profile: profile))
            wallet = WalletReport(try await engine.wallet(profile: profile))
            stats = try await engine.stats(.day, profile: profile)
            week = try await engine.stats(.week, profile: profile)
            digest = try await engine.digest(profile: profile)
        } catch {
            return await failurePage(error, session: session, cookie: cookie, back: "/")
        }
        let now = status.now
        var view = await base(session, title: profile == HelperEngine.defaultProfile ? "This device" : profile)
        view["profileTitle"] = profile == HelperEngine.defaultProfile ? "This device" : "Profile \(profile)"
        view["profile"] = profile
        view["balance"] = TimeWords.balance(seconds: status.balanceSeconds)
        view["earnedToday"] = TimeWords.balance(seconds: wallet.earnedTodaySeconds)
        view["nextCredit"] = wallet.nextAwardAt.map { "+5 min at " + TimeWords.clock($0, now: now) }
            ?? (wallet.earningFrozenUntil.map { "paused until " + TimeWords.clock($0, now: now) } ?? "once a block is on")
        view["streak"] = stats.streakDays == 1 ? "1 day" : "\(stats.streakDays) days"
        view["peeksLeft"] = "\(status.peeksLeftToday)"
        view["tokensLeft"] = "\(status.tokensLeftMonth)"
        if let strict = status.strictCurfewUntil { view["strictUntil"] = TimeWords.until(strict, now: now) }
        let grants = status.grants.map { grant -> [String: Any] in
            var g: [String: Any] = ["entry": grant.entry, "until": TimeWords.until(grant.end, now: now),
                                    "secondsLeft": max(0, (grant.end - now).milliseconds / 1000)]
            if let task = grant.task { g["task"] = task }
            return g
        }
        view["grants"] = grants
        view["hasGrants"] = !grants.isEmpty
        view["entries"] = status.entries.map {
            Self.entryView($0, now: now, peeksLeft: status.peeksLeftToday, tokensLeft: status.tokensLeftMonth, balanceSeconds: status.balanceSeconds)
        }
        // A focus session with its reason, and what it allows.
        let focus = status.focus.map { session -> [String: Any] in
            var f: [String: Any] = ["entries": session.entries.joined(separator: ", "), "until": TimeWords.until(session.end, now: now),
                                    "verb": session.entries.count == 1 ? "stays" : "stay"]
            if let reason = session.reason, !reason.isEmpty { f["reason"] = reason }
            return f
        }
        view["focus"] = focus
        view["hasFocus"] = !focus.isEmpty
        view["focusAllows"] = Self.focusAllows
        view["insights"] = Self.insights(day: stats, week: week)
        view["charts"] = InsightCharts.view(week, digest: digest.digest)
        // SPEC §5a, §4a: an owner's pause and the daily allowances with what is left today; no buttons.
        addSupervision(to: &view, status: status, supervising: false)
        await addMemberHousehold(to: &view, profile: profile)
        return WebResponses.html(.ok, WebTemplates.render("member", view), cookie: cookie)
    }

    /// SPEC §7's numbers for today and this week, with bars of protected against open time: what
    /// the person did, numbers first, never a scold.
    static func insights(day: StatsReport, week: StatsReport) -> [[String: Any]] {
        [("Today", day), ("Last 7 days", week)].map { title, s in
            let total = max(1, s.protectedSeconds + s.openSeconds)
            return [
                "title": title,
                "urges": s.urges == 1 ? "1 urge" : "\(s.urges) urges",
                "resisted": s.urges == 0 ? "" : ", \(s.urgesResisted) resisted",
                "protected": TimeWords.span(seconds: s.protectedSeconds),
                "open": TimeWords.span(seconds: s.openSeconds),
                "protectedPercent": "\(s.protectedSeconds * 100 / total)",
                "openPercent": "\(s.openSeconds * 100 / total)",
            ]
        }
    }

    /// What a focus session allows (SPEC §2.5, §5), said on the page and in `focus --help`.
    static let focusAllows = "A focus session cannot be ended early, you included, and what it names cannot be unblocked until it ends. "
        + "It blocks as any block does: peeks, your credit and tokens still open an entry for a while."

    /// One entry in the people's words: its state, what comes next, the rule's own reason, and
    /// the ways to open it that would not be refused.
    static func entryView(_ entry: EntryReport, now: Instant, peeksLeft: Int = 0, tokensLeft: Int = 0, balanceSeconds: Int64 = 0) -> [String: Any] {
        var view: [String: Any] = ["id": entry.id, "state": entry.state.wireName]
        switch entry.state {
        case .blocked, .curfew:
            view["stateWords"] = entry.state.wireName
            // The words `status` uses: "then curfew at 21:30" when a curfew follows, not "until".
            view["until"] = entry.nextChangeWords(now: now) ?? "around the clock"
        case .open:
            view["stateWords"] = entry.state.wireName
            if let end = entry.openUntil ?? entry.nextChange { view["until"] = "until " + TimeWords.until(end, now: now) }
        case .scheduled:
            view["stateWords"] = "not blocked now"
            if let next = entry.nextChange { view["until"] = "blocks from " + TimeWords.clock(next, now: now) }
        case .none, .unknown:
            view["stateWords"] = entry.state.wireName
        }
        if let reason = entry.reason, !reason.isEmpty { view["reason"] = reason }
        // SPEC §4a: today's allowance left for the entry.
        if let left = entry.allowanceLeftSeconds { view["allowanceLeft"] = "\(TimeWords.span(seconds: left)) of today's allowance left" }
        // `unblock` removes only an around-the-clock block; a schedule or focus session stays.
        view["unblockable"] = entry.aroundTheClock
        // A curfew opens for nothing (SPEC §2); a block window does, through the ladder. Only what
        // would not be refused is offered: while the entry rests after a peek or token, neither;
        // no token with none left this month; no spend without credit.
        guard entry.state == .blocked else { return view }
        if let rest = entry.bypassRestsUntil {
            view["rests"] = "peeks again at " + TimeWords.clock(rest, now: now) + " (it rests twice as long as it was open)"
        } else {
            if peeksLeft > 0 { view["peekable"] = true }
            if tokensLeft > 0 { view["tokenable"] = true }
        }
        if balanceSeconds > 0 { view["usable"] = true }
        view["bypassable"] = true
        return view
    }

    /// What a bypass form asks for, read from a query or a form.
    struct BypassAsk: Sendable {
        enum Action: String, Sendable { case peek, use, token }
        var action: Action
        var entry: String
        /// `use --for`: nil opens it until the person stops or the credit runs out, as `scrolloff use` without `--for`.
        var limit: SpendLimitSeconds?
        /// The limit in whole minutes, as the form carries it.
        var minutes: Int64? { limit.map { $0.seconds / 60 } }
        /// `--task` (SPEC §5): what the bypass is for, shown while it runs.
        var task: String?

        /// The longest task the page takes; the CLI's is bound only by the socket's body limit.
        static let maxTask = 200

        init(_ read: (String) -> String?) throws {
            // A query's empty field is "" where a form's is nil: both mean "not given".
            func values(_ name: String) -> String? {
                read(name).flatMap { $0.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty ? nil : $0 }
            }
            guard let word = values("action"), let action = Action(rawValue: word) else {
                throw WebFailure(.badRequest, "Choose peek, use or token.")
            }
            guard let entry = values("entry"), entry.count <= 253 else { throw WebFailure(.badRequest, "Name the entry, such as instagram.") }
            self.action = action
            self.entry = entry
            if action == .use, let text = values("minutes") {
                // Bounded as the control API bounds `for_seconds`, before anything multiplies it.
                do throws(WireRangeError) { limit = try SpendLimitSeconds(minutes: text) } catch {
                    throw WebFailure(.badRequest, "\(error) Leave it empty to use your credit until you stop.")
                }
            }
            if let task = values("task") {
                guard task.count <= Self.maxTask else { throw WebFailure(.badRequest, "Say what it is for in at most \(Self.maxTask) characters.") }
                self.task = task
            }
        }

        /// The hidden fields that carry the ask from the moment to the exercise and the bypass;
        /// the task is typed in a visible field of the form that opens the entry.
        var fields: [[String: String]] {
            var out = [["name": "action", "value": action.rawValue], ["name": "entry", "value": entry]]
            if let minutes { out.append(["name": "minutes", "value": "\(minutes)"]) }
            return out
        }

        var query: String {
            fields.map { "\($0["name"]!)=\($0["value"]!.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")" }.joined(separator: "&")
        }

        var verb: String {
            switch action {
            case .peek: "peek at \(entry)"
            case .use: minutes.map { "open \(entry) for \($0) min" } ?? "open \(entry) until you stop"
            case .token: "use a token for \(entry)"
            }
        }
    }

    /// The moment of temptation (SPEC §8, §9a): the person's plan and alternatives before anything
    /// opens, then, before a paid bypass (a paid peek or a token), the optional exercise, exactly
    /// as the terminal flow (`BypassFlow`) offers it.
    func momentPage(_ request: Request, _ context: WebContext, exercise showExercise: Bool) async throws -> Response {
        let (session, cookie) = await session(request)
        let ask = try BypassAsk { request.uri.queryParameters.get($0) }
        try await memberMay(.view, context)
        let profile = deviceProfile(context)
        let preview: BypassOutlook
        do { preview = try await engine.bypassPreview(profile: profile, entry: ask.entry) } catch {
            return await failurePage(error, session: session, cookie: cookie, back: "/")
        }
        let now = await engine.trustedNow()
        let exercise = Exercise.ofTheDay(now.date)
        var view = await base(session, title: "Before you open \(ask.entry)")
        view["entry"] = ask.entry
        if let plan = preview.plan { view["plan"] = ["when": plan.when, "then": plan.then] }
        view["alternatives"] = Array(preview.alternatives.prefix(3))
        view["hasAlternatives"] = !preview.alternatives.isEmpty
        if preview.plan == nil, preview.plansOnFile > 0 {
            view["plansNote"] = "You have \(preview.plansOnFile == 1 ? "1 plan" : "\(preview.plansOnFile) plans"), none matches now."
        }
        // Nothing is offered that will be refused: with no token or peek left, say so and offer
        // asking an owner for time instead.
        switch ask.action {
        case .token where preview.tokensLeftMonth == 0: view["unavailable"] = "No emergency tokens left this month."
        case .peek where preview.peeksLeftToday == 0: view["unavailable"] = "No peeks left today; they come back at midnight."
        default: break
        }
        view["asking"] = ProfileRole.member.allows(.ask)
        view["fields"] = ask.fields
        view["query"] = ask.query
        view["verb"] = ask.verb
        view["verbTitle"] = ask.verb.prefix(1).uppercased() + ask.verb.dropFirst()
        view["maxTask"] = "\(BypassAsk.maxTask)"
        view["exerciseTitle"] = exercise.title
        view["exerciseMinutes"] = "\(max(1, exercise.duration.milliseconds / 60_000))"
        view["seconds"] = "\(exercise.duration.milliseconds / 1000)"
        view["steps"] = exercise.steps
        // `BypassFlow.run`: paid = a token, or a peek past the free one.
        view["offerExercise"] = view["unavailable"] == nil && (ask.action == .token || (ask.action == .peek && preview.step != .freePeek))
        switch ask.action {
        case .peek:
            view["what"] = preview.step == .freePeek
                ? "A free 60-second peek. \(preview.peeksLeftToday) left today."
                : "This peek costs \(TimeWords.span(seconds: preview.costSeconds ?? 60)) of credit. \(preview.peeksLeftToday) left today."
        case .use:
            view["what"] = ask.minutes.map { "Up to \($0) min of your credit, paid by the second; stop whenever you are done." }
                ?? "Your credit, paid by the second, until you stop or it runs out."
        case .token:
            view["what"] = "An emergency token opens it for 10 minutes. \(preview.tokensLeftMonth) left this month."
        }
        if showExercise { await sessions.startExercise(session.id) }
        return WebResponses.html(.ok, WebTemplates.render(showExercise ? "exercise" : "moment", view), cookie: cookie)
    }

    /// Peek, use or token, after recording the exercise's outcome when one was offered
    /// (`POST /v1/exercises` then `POST /v1/peek|use|token`, the same engine calls).
    func bypass(_ request: Request, _ context: WebContext) async throws -> Response {
        // SPEC §12: a refusal names the device that asked.
        try await ChangeActor.$current.withValue("device \(device(context)) on the household page") {
            try await bypassFromDevice(request, context)
        }
    }

    private func bypassFromDevice(_ request: Request, _ context: WebContext) async throws -> Response {
        let (session, form) = try await checkedPost(request, context)
        try await memberMay(.spend, context)
        let ask = try BypassAsk { form[$0] }
        let profile = deviceProfile(context)
        do {
            if var outcome = Self.outcome(form) {
                let exercise = Exercise.ofTheDay(await engine.trustedNow().date)
                // The timer runs in the page; the record says "completed" only when the exercise's
                // time has really passed since its page opened (a few seconds' grace for the
                // round trip), so a page without JavaScript or a hand-made form cannot claim it.
                let grace = Duration.seconds(5)
                let minimum = Duration.milliseconds(exercise.duration.milliseconds) - grace
                let timed = await sessions.finishExercise(session.id, lasting: minimum)
                if outcome == .completed, !timed { outcome = .skipped }
                try await engine.recordExercise(exercise.id, entry: ask.entry, outcome: outcome, profile: profile)
                if outcome == .bypassAvoided {
                    var view = await base(session, title: "Well done")
                    let what = ask.action == .token ? "token" : "peek"
                    view["done"] = "Well done. \(ask.entry) stays blocked, and your \(what) is still there if you need it."
                    view["back"] = "/"
                    return WebResponses.html(.ok, WebTemplates.render("outcome", view))
                }
            }
            let result: OpenedGrant
            switch ask.action {
            case .peek: result = try await engine.peek(ask.entry, task: ask.task, profile: profile)
            case .token: result = try await engine.token(ask.entry, task: ask.task, profile: profile)
            case .use: result = try await engine.use(ask.entry, for: ask.limit?.span, task: ask.task, profile: profile)
            }
            let grant = result.grant
            await sessions.setFlash(session.id, "\(grant.entry) is open until \(TimeWords.until(grant.end, now: grant.start)). "
                + "Balance \(TimeWords.balance(seconds: result.balanceSeconds)).")
            return WebResponses.redirect("/")
        } catch {
            return await failurePage(error, session: session, cookie: nil, back: "/")
        }
    }

    /// The exercise's outcome from the form: none when no exercise was offered.
    static func outcome(_ form: WebForm) -> ExerciseRecord.Outcome? {
        if form["avoid"] != nil { return .bypassAvoided }
        switch form["outcome"] {
        case "completed": return .completed
        case "skipped": return .skipped
        default: return nil
        }
    }

    func stop(_ request: Request, _ context: WebContext) async throws -> Response {
        let (session, form) = try await checkedPost(request, context)
        try await memberMay(.spend, context)
        let profile = deviceProfile(context)
        do {
            let result = try await engine.stop(form["entry"], profile: profile)
            await sessions.setFlash(session.id, result.message)
            return WebResponses.redirect("/")
        } catch {
            return await failurePage(error, session: session, cookie: nil, back: "/")
        }
    }
}
