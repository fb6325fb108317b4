import Foundation
import Store

/// Who is signed in on a browser of the household page (SPEC §9a).
struct OwnerIdentity: Sendable, Equatable {
    var name: String
    var uid: UInt32
    var gid: UInt32
}

/// One browser's session: a random id in an HttpOnly SameSite=Strict cookie, and the CSRF token
/// every form of that browser carries back (SPEC §9a "POSTs need a same-site session and a CSRF
/// token"). Members have a session without an owner: their profile is their device, never the
/// session, so a session cannot carry anyone into another profile.
struct WebSession: Sendable {
    var id: String
    var csrf: String
    var owner: OwnerIdentity?
    /// A one-time line shown at the top of the next page (after a POST that redirected).
    var flash: String?
    var lastSeen: ContinuousClock.Instant
    /// When this browser last opened the exercise page: "completed" is recorded only once the
    /// exercise's whole duration has passed since (the in-page timer is JavaScript a page could skip).
    var exerciseStartedAt: ContinuousClock.Instant?
}

/// The sessions in memory: a restart signs everyone out, which for a LAN page is the safe side.
/// Bounded in number and idle time so a flood of new browsers cannot grow the helper.
///
/// On a shared store (`[store] backend = "postgresql"`) the household's database holds them
/// (`WebAccountStore`), so an owner signed in on one helper's page is signed in on the other's,
/// and a sign-out on either ends the session on both. The memory table then keeps this helper's
/// copy of what it created or found: while the database cannot be reached, that copy answers (the
/// page still shows; a change needs the database anyway), and a sign-out meanwhile is done in
/// memory at once and in the database when it answers again.
actor WebSessions {
    static let cookieName = "scrolloff_session"
    static let idleLimit: Duration = .seconds(12 * 3600)
    static let maximumCount = 4096

    private var sessions: [String: WebSession] = [:]
    private let shared: (any WebAccountStore)?
    /// Sign-outs the database has not taken yet (it could not be reached); sent with the next call.
    private var pendingSignOuts: Set<String> = []

    init(shared: (any WebAccountStore)? = nil) { self.shared = shared }

    /// The session with `id`, refreshed; nil when unknown or idle too long.
    func find(_ id: String?) async -> WebSession? {
        guard let id else { return nil }
        if let shared {
            let idle = Self.milliseconds(Self.idleLimit)
            switch await call({ () throws(StoreError) in try shared.findWebSession(id: id, idleMilliseconds: idle) }) {
            case .success(let record?):
                let session = WebSession(record)
                remember(session)
                return session
            case .success(nil):
                sessions[id] = nil
                return nil
            case .failure:
                break // The database is away: this helper's copy answers.
            }
        }
        guard var session = sessions[id] else { return nil }
        let now = ContinuousClock.now
        if now - session.lastSeen > Self.idleLimit {
            sessions[id] = nil
            return nil
        }
        session.lastSeen = now
        sessions[id] = session
        return session
    }

    /// A new session without an owner.
    func create() async -> WebSession {
        let session = WebSession(id: Self.token(), csrf: Self.token(), owner: nil, flash: nil, lastSeen: .now)
        await keep(session, replacing: nil)
        return session
    }

    /// Signs `owner` in: the old session ends and a new one (new id, new CSRF token) begins, so an
    /// id someone planted before the sign-in is worth nothing after it (session fixation).
    func signIn(replacing id: String?, owner: OwnerIdentity) async -> WebSession {
        let session = WebSession(id: Self.token(), csrf: Self.token(), owner: owner, flash: nil, lastSeen: .now)
        await keep(session, replacing: id)
        return session
    }

    func signOut(_ id: String) async {
        sessions[id] = nil
        guard let shared else { return }
        pendingSignOuts.insert(id)
        await flushSignOuts(shared)
    }

    /// How many sessions are held (in the household's database, when shared and reachable).
    var count: Int {
        get async {
            if let shared, case .success(let n) = await call({ () throws(StoreError) in try shared.webSessionCount() }) { return n }
            return sessions.count
        }
    }

    func setFlash(_ id: String, _ text: String?) async {
        sessions[id]?.flash = text
        if let shared { _ = await call({ () throws(StoreError) in try shared.updateWebSession(id: id) { r, _ in r.flash = text } }) }
    }

    /// The exercise page was shown to this browser now.
    func startExercise(_ id: String) async {
        sessions[id]?.exerciseStartedAt = .now
        if let shared { _ = await call({ () throws(StoreError) in try shared.updateWebSession(id: id) { r, now in r.exerciseStartedAt = now } }) }
    }

    /// Whether `duration` has passed since this browser opened the exercise page; the start is
    /// used up, so one exercise completes one bypass.
    func finishExercise(_ id: String, lasting duration: Duration) async -> Bool {
        let local = sessions[id]?.exerciseStartedAt
        sessions[id]?.exerciseStartedAt = nil
        if let shared {
            // By the database's clock: the page may have been opened through the other helper.
            let needed = Self.milliseconds(duration)
            let result = await call({ () throws(StoreError) in
                try shared.updateWebSession(id: id) { r, now -> Bool in
                    defer { r.exerciseStartedAt = nil }
                    guard let started = r.exerciseStartedAt else { return false }
                    return now - started >= needed
                }
            })
            if case .success(let done) = result { return done ?? false }
        }
        guard let started = local else { return false }
        return ContinuousClock.now - started >= duration
    }

    /// The flash line, once.
    func takeFlash(_ id: String) async -> String? {
        let text = sessions[id]?.flash
        sessions[id]?.flash = nil
        if let shared {
            let result = await call({ () throws(StoreError) in
                try shared.updateWebSession(id: id) { r, _ -> String? in
                    defer { r.flash = nil }
                    return r.flash
                }
            })
            if case .success(let stored) = result { return stored ?? nil }
        }
        return text
    }

    /// Keeps `session` in memory and, when shared, in the database (`replacing` ends there too).
    private func keep(_ session: WebSession, replacing: String?) async {
        if let replacing { sessions[replacing] = nil }
        remember(session)
        guard let shared else { return }
        let record = WebSessionRecord(session)
        let idle = Self.milliseconds(Self.idleLimit)
        if let replacing { pendingSignOuts.insert(replacing) }
        await flushSignOuts(shared)
        _ = await call({ () throws(StoreError) in
            try shared.insertWebSession(record, replacing: nil, idleMilliseconds: idle, maximumCount: Self.maximumCount)
        })
    }

    /// This helper's copy, bounded: the least recently seen goes first.
    private func remember(_ session: WebSession) {
        if sessions[session.id] == nil, sessions.count >= Self.maximumCount,
           let oldest = sessions.values.min(by: { $0.lastSeen < $1.lastSeen }) {
            sessions[oldest.id] = nil
        }
        sessions[session.id] = session
    }

    private func flushSignOuts(_ shared: any WebAccountStore) async {
        for id in pendingSignOuts {
            if case .success = await call({ () throws(StoreError) in try shared.deleteWebSession(id: id) }) { pendingSignOuts.remove(id) }
        }
    }

    /// A call to the household's database, off the concurrency pool (`WebAccountCalls`).
    private func call<T: Sendable>(_ body: @escaping @Sendable () throws(StoreError) -> T) async -> Result<T, StoreError> {
        await calls.run(body)
    }

    private let calls = WebAccountCalls(label: "scrolloff.web.sessions")

    static func milliseconds(_ d: Duration) -> Int64 {
        d.components.seconds * 1000 + d.components.attoseconds / 1_000_000_000_000_000
    }

    /// 32 random bytes from the system's generator (getrandom), as hex.
    static func token() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<4).map { _ in String(format: "%016llx", generator.next() as UInt64) }.joined()
    }

    /// Compares two tokens in constant time.
    static func same(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count, !x.isEmpty else { return false }
        var difference: UInt8 = 0
        for (p, q) in zip(x, y) { difference |= p ^ q }
        return difference == 0
    }
}

/// Per-device budgets (SPEC §9a "actions and sign-ins are rate-limited"): a fixed window per client
/// address and kind. Sign-ins are few and slow (scrypt), so guessing a password from one device is
/// capped at `signIns` tries per window; actions are generous for a person, tight for a script.
package actor WebRateLimiter {
    enum Kind: Sendable { case signIn, action }

    struct Budget: Sendable {
        var limit: Int
        var window: Duration
    }

    let budgets: [Kind: Budget]
    private var used: [String: (start: ContinuousClock.Instant, count: Int)] = [:]
    /// Devices tracked at most. Past it, windows that ended are dropped, and if that is not
    /// enough (a LAN host with many addresses, such as IPv6 privacy addresses, each starting a
    /// window), the oldest half: the table, like the sessions, must not grow with what a device
    /// can send (SPEC §9a). A dropped device starts a fresh window, which a device with that many
    /// addresses has anyway.
    static let maximumTracked = 8192

    /// How many (kind, device) windows are held.
    var tracked: Int { used.count }

    init(signIns: Budget = Budget(limit: 5, window: .seconds(15 * 60)), actions: Budget = Budget(limit: 30, window: .seconds(60))) {
        budgets = [.signIn: signIns, .action: actions]
    }

    /// Counts one use by `device`; nil when allowed, else the seconds until the window resets.
    func take(_ kind: Kind, device: String) -> Int? {
        guard let budget = budgets[kind] else { return nil }
        let key = "\(kind):\(device)"
        let now = ContinuousClock.now
        if used.count >= Self.maximumTracked { forgetOldWindows(now: now) }
        var entry = used[key] ?? (now, 0)
        if now - entry.start >= budget.window { entry = (now, 0) }
        guard entry.count < budget.limit else {
            let left = budget.window - (now - entry.start)
            return max(1, Int(left.components.seconds) + 1)
        }
        entry.count += 1
        used[key] = entry
        return nil
    }

    private func forgetOldWindows(now: ContinuousClock.Instant) {
        let longest = budgets.values.map(\.window).max() ?? .zero
        used = used.filter { now - $0.value.start < longest }
        guard used.count >= Self.maximumTracked / 2 else { return }
        let oldestFirst = used.sorted { $0.value.start < $1.value.start }
        for (key, _) in oldestFirst.prefix(used.count - Self.maximumTracked / 2) { used[key] = nil }
    }
}

extension WebSession {
    init(_ r: WebSessionRecord) {
        var owner: OwnerIdentity?
        if let name = r.ownerName, let uid = r.ownerUID, let gid = r.ownerGID { owner = OwnerIdentity(name: name, uid: uid, gid: gid) }
        self.init(id: r.id, csrf: r.csrf, owner: owner, flash: r.flash, lastSeen: .now)
    }
}

extension WebSessionRecord {
    init(_ s: WebSession) {
        self.init(id: s.id, csrf: s.csrf, ownerName: s.owner?.name, ownerUID: s.owner?.uid, ownerGID: s.owner?.gid, flash: s.flash)
    }
}
