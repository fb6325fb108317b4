import ControlAPI
import ControlServer
import Engine
import Foundation
import Hummingbird
import ScrollOffCore
#if canImport(Glibc)
import Glibc
#endif

/// The owner's side (SPEC §9a): signed in with a password root set, an owner's uid has on this
/// page exactly the rights it has on the control socket: one decision, the `ControlAuthorizer`.
extension HouseholdWeb {
    func signInPage(_ request: Request, _ context: WebContext) async throws -> Response {
        let (session, cookie) = await session(request)
        let view = await base(session, title: "Owner sign-in")
        return WebResponses.html(.ok, WebTemplates.render("signin", view), cookie: cookie)
    }

    /// A wrong name or password: the form again, with the error and the name typed, so the owner
    /// can try again at once (not a bare page with one button).
    func signInAgain(_ session: WebSession, name: String, error: String) async -> Response {
        var view = await base(session, title: "Owner sign-in")
        view["error"] = error
        if OwnerPasswords.isValidName(name) { view["name"] = name }
        return WebResponses.html(.unauthorized, WebTemplates.render("signin", view))
    }

    func signIn(_ request: Request, _ context: WebContext) async throws -> Response {
        let (session, form) = try await checkedPost(request, context, kind: .signIn)
        guard let name = form["name"], let password = form.values["password"], !password.isEmpty else {
            throw WebFailure(.badRequest, "Give your user name and password.")
        }
        // Per name as well as per device: many devices guessing one owner's password share this.
        // Only a possible user name is counted (others can never sign in, and must not fill the table).
        let countable = OwnerPasswords.isValidName(name)
        if countable, let wait = await signIns.begin(name, owner: passwords.names().contains(name)) {
            // Once a minute at most, with the count: a guesser's every try would flood the journal.
            signInWaitLog.warning("web-sign-in-wait", "household page: sign-ins as \(name) wait \(wait.seconds) s after \(wait.failures) wrong passwords in a row",
                                  metadata: ["web.owner": "\(name)", "client.ip": "\(device(context))"])
            let delay = TimeWords.span(seconds: Int64(wait.seconds), rounding: .up)
            let longest = TimeWords.span(seconds: Int64(signIns.policy.maximumDelay.components.seconds), rounding: .up)
            throw WebFailure(
                .tooManyRequests,
                "\(delay) to wait before signing in as “\(name)” again: \(wait.failures) wrong passwords in a row, so each new try waits twice as long as the "
                    + "one before, never more than \(longest). The right password waits too, so a guesser gains nothing by trying faster; try yours again then.",
                retryAfter: wait.seconds)
        }
        let matches = await OwnerPasswords.checking.verify(passwords, name: name, password: password)
        guard matches, let user = SystemGroups.user(named: name) else {
            // What was typed as the name is logged only when it can be a user name: a password
            // typed into the wrong field must not end up in the journal.
            let shown = OwnerPasswords.isValidName(name) ? name : "(not a user name)"
            logger.notice("household page: a sign-in failed", metadata: ["web.owner": "\(shown)", "client.ip": "\(device(context))"])
            return await signInAgain(session, name: name,
                                     error: "That user name and password do not match. Try again; root can set a password with `scrolloff-dns web passwd \(OwnerPasswords.isValidName(name) ? name : "NAME")`.")
        }
        await signIns.succeeded(name)
        let signedIn = await sessions.signIn(replacing: session.id, owner: OwnerIdentity(name: name, uid: user.uid, gid: user.gid))
        logger.info("household page: an owner signed in", metadata: ["web.owner": "\(name)", "client.ip": "\(device(context))"])
        return WebResponses.redirect("/owner", cookie: WebResponses.sessionCookie(signedIn.id))
    }

    func signOut(_ request: Request, _ context: WebContext) async throws -> Response {
        let (session, _) = try await checkedPost(request, context)
        await sessions.signOut(session.id)
        return WebResponses.redirect("/")
    }

    /// The signed-in owner, or a redirect to the sign-in page.
    func owner(of session: WebSession) throws -> OwnerIdentity {
        guard let owner = session.owner else { throw WebFailure(.unauthorized, "Sign in as an owner first: /signin.") }
        return owner
    }

    /// Whether `owner` may do `action` on `profile`, as the control socket decides it for their uid.
    func decide(_ owner: OwnerIdentity, profile: String, action: ProfileAction) async -> AuthorizationDecision {
        guard let access = await engine.profileAccess()[profile] else {
            return .denied(reason: "There is no profile “\(profile)”.")
        }
        return authorizer.decide(CallerIdentity(uid: owner.uid, gid: owner.gid, pid: 0), profile: profile, access: access, action: action)
    }

    func authorized(_ owner: OwnerIdentity, _ profile: String?, _ action: ProfileAction) async throws -> String {
        guard let profile else { throw WebFailure(.badRequest, "Name the profile.") }
        switch await decide(owner, profile: profile, action: action) {
        case .allowed: return profile
        case .denied(let reason), .deniedByRole(let reason): throw WebFailure(.forbidden, reason)
        }
    }

    func ownerPage(_ request: Request, _ context: WebContext) async throws -> Response {
        let (session, cookie) = await session(request)
        guard let owner = session.owner else { return WebResponses.redirect("/signin", cookie: cookie) }
        var profiles: [[String: Any]] = []
        // What needs an answer leads the page (SPEC §9a): requests waiting, and who is in curfew now.
        var waiting: [[String: Any]] = []
        var inCurfew: [String] = []
        for (name, _) in await engine.profileList() {
            guard case .allowed = await decide(owner, profile: name, action: .view) else { continue }
            do {
                let status = StatusReport(try await engine.status(profile: name))
                let wallet = WalletReport(try await engine.wallet(profile: name))
                var view: [String: Any] = [
                    "name": name,
                    "balance": TimeWords.balance(seconds: status.balanceSeconds),
                    "earnedToday": TimeWords.balance(seconds: wallet.earnedTodaySeconds),
                    "spentToday": TimeWords.balance(seconds: wallet.spentTodaySeconds),
                    "peeksLeft": "\(status.peeksLeftToday)", "tokensLeft": "\(status.tokensLeftMonth)",
                    "entries": status.entries.map { entry -> [String: Any] in
                        var e = Self.entryView(entry, now: status.now)
                        e["profile"] = name
                        return e
                    },
                ]
                view["schedules"] = try await ownerScheduleViews(profile: name, now: status.now)
                // Each member's week (SPEC §7), the same figures as their own page.
                view["charts"] = InsightCharts.view(try await engine.stats(.week, profile: name),
                                                    digest: try await engine.digest(profile: name).digest)
                addSupervision(to: &view, status: status, supervising: await decide(owner, profile: name, action: .supervise) == .allowed)
                let grants = await decide(owner, profile: name, action: .grant) == .allowed
                await addOwnerHousehold(to: &view, profile: name, now: status.now, grants: grants)
                waiting += view["requests"] as? [[String: Any]] ?? []
                let curfewed = status.entries.filter { $0.state == .curfew }
                if let strict = status.strictCurfewUntil {
                    inCurfew.append("\(name): strict curfew until \(TimeWords.until(strict, now: status.now))")
                } else if let first = curfewed.first {
                    let until = first.nextChange.map { " until " + TimeWords.until($0, now: status.now) } ?? ""
                    inCurfew.append("\(name): \(curfewed.map(\.id).joined(separator: ", ")) in curfew\(until)")
                }
                profiles.append(view)
            } catch {
                logger.warning("household page: a profile could not be read", metadata: ["profile": "\(name)", "error": "\(error)"])
            }
        }
        var view = await base(session, title: "Household")
        view["profiles"] = profiles
        view["hasProfiles"] = !profiles.isEmpty
        view["waiting"] = waiting
        view["waitingWords"] = waiting.isEmpty ? "No request waits for an answer."
            : waiting.count == 1 ? "1 request waits for an answer" : "\(waiting.count) requests wait for an answer"
        view["inCurfew"] = inCurfew
        return WebResponses.html(.ok, WebTemplates.render("owner", view), cookie: cookie)
    }

    /// Tightening (block) is always allowed; loosening (unblock) meets the same cooldown and locks
    /// as `scrolloff unblock`, because it is the same engine call.
    func ownerBlock(_ request: Request, _ context: WebContext, block: Bool) async throws -> Response {
        let (session, form) = try await checkedPost(request, context)
        let owner = try owner(of: session)
        let profile = try await authorized(owner, form["profile"], .edit)
        guard let entry = form["entry"] else { throw WebFailure(.badRequest, "Name the entry, such as tiktok.") }
        let words = entry.split(whereSeparator: { $0 == "," || $0 == " " }).map(String.init)
        // SPEC §12: the rule change and any refusal name the signed-in owner.
        return await ChangeActor.$current.withValue("web owner \(owner.name) (uid \(owner.uid))") {
            do throws(EngineError) {
                let result = block
                    ? try await engine.block(words, reason: form["reason"], profile: profile)
                    : try await engine.unblock(words, profile: profile)
                await sessions.setFlash(session.id, "\(profile): \(result.message)")
                return WebResponses.redirect("/owner")
            } catch {
                return await failurePage(error, session: session, cookie: nil, back: "/owner")
            }
        }
    }
}

extension SystemGroups {
    /// The uid and primary gid of the user called `name`, from the password database.
    static func user(named name: String) -> (uid: UInt32, gid: UInt32)? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16 * 1024)
        guard getpwnam_r(name, &entry, &buffer, buffer.count, &result) == 0, result != nil else { return nil }
        return (entry.pw_uid, entry.pw_gid)
    }
}
