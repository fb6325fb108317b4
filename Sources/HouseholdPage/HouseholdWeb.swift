import ControlAPI
import ControlServer
import Engine
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import ScrollOffCore
import ServiceKit
import Sinkhole
import Store

/// The household page (SPEC §9a): what a member's device may see and do for its own profile, and
/// what a signed-in owner may do for the profiles the control socket would let their uid touch.
///
/// Every action calls the same `HelperEngine` method as the control route of the CLI verb
/// (EngineRoutes), so cooldowns, curfews, the bypass ladder and locks decide the same way; and
/// every owner's right goes through the one `ControlAuthorizer` the socket uses (SPEC §11).
///
/// | Page | Route |
/// |---|---|
/// | this device: entries, wallet, streak | GET / |
/// | the moment before a bypass: plan, alternatives, exercise offer | GET /moment?action=peek|use|token&entry=E[&minutes=N] |
/// | the exercise with its calm timer | GET /exercise?… (same) |
/// | peek / use / token, with the exercise's outcome | POST /bypass |
/// | stop | POST /stop |
/// | owner sign-in / sign-out | GET, POST /signin; POST /signout |
/// | owner: every profile they may act on | GET /owner |
/// | owner: block (tighten) / unblock (locks apply) | POST /owner/block, POST /owner/unblock |
/// | member: history, plans, alternatives, focus | `HouseholdWeb+Own` |
/// | member: ask for time; owner: answer, adjust | `HouseholdWeb+Requests` |
/// | owner: add a schedule (tighten), remove one (locks apply) | `HouseholdWeb+OwnerSchedules` |
package struct HouseholdWeb: Sendable {
    let engine: HelperEngine
    let authorizer: any ControlAuthorizer
    let passwords: OwnerPasswords
    let sessions: WebSessions
    let limiter: WebRateLimiter
    let signIns: SignInBackoff
    let signInWaitLog: ThrottledLog
    let logger: Logger

    /// - Parameter sessions: where browsers' sessions are kept: the household's database when the
    ///   helpers share one (`WebAccountStore`), else this helper's memory (nil).
    package init(engine: HelperEngine, authorizer: any ControlAuthorizer, passwords: OwnerPasswords,
         limiter: WebRateLimiter = WebRateLimiter(), signIns: SignInBackoff = SignInBackoff(), sessions shared: (any WebAccountStore)? = nil,
         logger: Logger) {
        self.engine = engine
        self.authorizer = authorizer
        self.passwords = passwords
        self.sessions = WebSessions(shared: shared)
        self.limiter = limiter
        self.signIns = signIns
        self.signInWaitLog = ThrottledLog(logger: logger)
        self.logger = logger
    }

    func router() -> Router<WebContext> {
        let router = Router(context: WebContext.self)
        // Before the routes: Hummingbird applies a router's middleware to the routes added after it.
        router.middlewares.add(WebFailureMiddleware(web: self))
        router.middlewares.add(WebTransferCodingMiddleware(web: self))
        router.get("/") { request, context in try await memberPage(request, context) }
        router.get("/moment") { request, context in try await momentPage(request, context, exercise: false) }
        router.get("/exercise") { request, context in try await momentPage(request, context, exercise: true) }
        router.post("/bypass") { request, context in try await bypass(request, context) }
        router.post("/stop") { request, context in try await stop(request, context) }
        router.get("/signin") { request, context in try await signInPage(request, context) }
        router.post("/signin") { request, context in try await signIn(request, context) }
        router.post("/signout") { request, context in try await signOut(request, context) }
        router.get("/owner") { request, context in try await ownerPage(request, context) }
        router.post("/owner/block") { request, context in try await ownerBlock(request, context, block: true) }
        router.post("/owner/unblock") { request, context in try await ownerBlock(request, context, block: false) }
        addHousehold(to: router)
        addOwn(to: router)
        addOwnerSchedules(to: router)
        addPause(to: router)
        addLive(to: router)
        return router
    }

    // MARK: Who is asking

    /// The device's profile, by the same table and lookup the sinkhole uses for its queries
    /// (`Enforcement.router`: MAC through the neighbour table, address or network, then
    /// `unknown_devices`).
    func deviceProfile(_ context: WebContext) -> String { engine.profileName(forClient: context.client) }

    func device(_ context: WebContext) -> String { context.client.description }

    /// The device as the budgets count it (`PageDevice`): its MAC when the neighbour table knows
    /// it, else its IPv4 address or IPv6 /64.
    func budgetKey(_ context: WebContext) -> String {
        PageDevice(context.client, mac: engine.neighbours.mac(for: context.client)).description
    }

    /// A device is a member of its own profile: what a member may do there is the one table of
    /// roles the control socket uses too (`ProfileRole`), so the page grants nothing more.
    ///
    /// A connection from a process on this machine (loopback, or the machine's own address) is
    /// not a household device but a user: it gets exactly what the control socket gives that uid
    /// (SPEC §11), or the page would hand every local account, even one outside group
    /// `scrolloff`, a member's rights on the profile that covers 127.0.0.1.
    func memberMay(_ action: ProfileAction, _ context: WebContext) async throws {
        guard ProfileRole.member.allows(action) else {
            throw WebFailure(.forbidden, "A device may not \(action.words) here; an owner can, after signing in.")
        }
        switch context.peer() {
        case .device:
            return
        case .unknownLocal:
            // Fail closed: a loopback connection whose user the kernel's table does not show
            // (gone already, or another network namespace's) is nobody's to act for.
            throw WebFailure(.forbidden, "This page could not tell which user on this computer opened it, so it changed nothing. "
                + "Reload the page and try again, or use the `scrolloff` command instead.")
        case .localUser(let caller):
            let profile = deviceProfile(context)
            let access = await engine.profileAccess()[profile] ?? ProfileAccess()
            switch authorizer.decide(caller, profile: profile, access: access, action: action) {
            case .allowed: return
            case .denied(let reason), .deniedByRole(let reason):
                throw WebFailure(.forbidden, "On this computer the page acts for the user who opens it, with the rights the "
                    + "`scrolloff` command gives them, so it changed nothing. \(reason)")
            }
        }
    }

    /// The browser's session, created on first sight; `cookie` is set when it is new.
    func session(_ request: Request) async -> (WebSession, cookie: String?) {
        if let found = await sessions.find(request.cookies[WebSessions.cookieName]?.value) { return (found, nil) }
        let created = await sessions.create()
        return (created, WebResponses.sessionCookie(created.id))
    }

    /// A POST's checks, in order: a session cookie (SameSite=Strict, so never from another site's
    /// page), the form's CSRF token equal to the session's, and the device's action budget.
    func checkedPost(_ request: Request, _ context: WebContext, kind: WebRateLimiter.Kind = .action) async throws -> (WebSession, WebForm) {
        let form = try await WebForm.read(request, context)
        guard let session = await sessions.find(request.cookies[WebSessions.cookieName]?.value),
              let token = form["csrf"], WebSessions.same(token, session.csrf)
        else {
            throw WebFailure(.forbidden, "This form has expired or did not come from this page. Go back, reload the page and try again.")
        }
        if let wait = await limiter.take(kind, device: budgetKey(context)) {
            let what = kind == .signIn ? "sign-in attempts" : "actions"
            throw WebFailure(.tooManyRequests, "Too many \(what) from this device. Try again in \(TimeWords.span(seconds: Int64(wait), rounding: .up)).",
                             retryAfter: wait)
        }
        return (session, form)
    }

    /// The layout's fields every page has.
    func base(_ session: WebSession, title: String) async -> [String: Any] {
        var view: [String: Any] = ["title": title, "csrf": session.csrf]
        if let owner = session.owner { view["owner"] = owner.name }
        if let flash = await sessions.takeFlash(session.id) { view["flash"] = flash }
        return view
    }

    // MARK: Answers for failures

    /// A refusal or another failure as a page with the status the control API would use: a rule's
    /// refusal shows its headline (which rule, until when), the helper's words and the person's reason.
    func failurePage(_ error: EngineError, session: WebSession, cookie: String?, back: String) async -> Response {
        let now = await engine.trustedNow()
        let failure = ControlFailure(error, now: now)
        var view = await base(session, title: "Not now")
        var refusal: [String: Any] = ["message": failure.error.message, "rule": failure.error.rule ?? failure.error.code]
        if let headline = RefusalHeadline.text(failure.error, now: now) { refusal["headline"] = headline }
        if let reason = failure.error.reason, !reason.isEmpty { refusal["reason"] = reason }
        if let opens = failure.error.opensAt { refusal["opensAt"] = ISO8601DateFormatter().string(from: opens) }
        // A member cannot change the rules that refused them; an owner can give time.
        let askable: Set<Refusal.Rule> = [.tokensUsedUp, .peeksUsedUp, .insufficientCredit, .curfew, .bypassLockout, .entryDailySpendCap]
        if back == "/", let rule = failure.error.refusalRule, askable.contains(rule), ProfileRole.member.allows(.ask) {
            refusal["askForTime"] = true
        }
        view["refusal"] = refusal
        view["back"] = back
        return WebResponses.html(HTTPResponse.Status(code: Int(failure.status.code)), WebTemplates.render("outcome", view), cookie: cookie)
    }

    func render(_ failure: WebFailure, _ request: Request) async -> Response {
        let (session, cookie) = await session(request)
        var view = await base(session, title: "Not now")
        view["refusal"] = ["message": failure.message, "rule": failure.rule]
        view["back"] = "/"
        var extra: HTTPFields = [:]
        if let wait = failure.retryAfter { extra[.retryAfter] = "\(wait)" }
        return WebResponses.html(failure.status, WebTemplates.render("outcome", view), cookie: cookie, extra: extra)
    }
}

/// A page-level refusal that is not the engine's: a missing CSRF token, a budget spent, a
/// profile the owner may not touch.
struct WebFailure: Error, Sendable {
    var status: HTTPResponse.Status
    var message: String
    var retryAfter: Int?

    init(_ status: HTTPResponse.Status, _ message: String, retryAfter: Int? = nil) {
        self.status = status
        self.message = message
        self.retryAfter = retryAfter
    }

    var rule: String {
        switch status.code {
        case 403: "forbidden"
        case 429: "rate_limited"
        case 401: "sign_in"
        default: "invalid"
        }
    }
}

/// Turns `WebFailure` into its page, so handlers can throw it from any depth.
struct WebFailureMiddleware: RouterMiddleware {
    typealias Context = WebContext
    let web: HouseholdWeb

    func handle(_ request: Request, context: WebContext, next: (Request, WebContext) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let failure as WebFailure {
            return await web.render(failure, request)
        } catch let error as HTTPError where error.status == .contentTooLarge {
            return await web.render(WebFailure(.contentTooLarge, "That form is larger than this page accepts."), request)
        }
    }
}
