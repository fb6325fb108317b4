import Foundation

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
actor WebSessions {
    static let cookieName = "scrolloff_session"
    static let idleLimit: Duration = .seconds(12 * 3600)
    static let maximumCount = 4096

    private var sessions: [String: WebSession] = [:]

    /// The session with `id`, refreshed; nil when unknown or idle too long.
    func find(_ id: String?) -> WebSession? {
        guard let id, var session = sessions[id] else { return nil }
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
    func create() -> WebSession {
        if sessions.count >= Self.maximumCount, let oldest = sessions.values.min(by: { $0.lastSeen < $1.lastSeen }) {
            sessions[oldest.id] = nil
        }
        let session = WebSession(id: Self.token(), csrf: Self.token(), owner: nil, flash: nil, lastSeen: .now)
        sessions[session.id] = session
        return session
    }

    /// Signs `owner` in: the old session ends and a new one (new id, new CSRF token) begins, so an
    /// id someone planted before the sign-in is worth nothing after it (session fixation).
    func signIn(replacing id: String?, owner: OwnerIdentity) -> WebSession {
        if let id { sessions[id] = nil }
        var session = create()
        session.owner = owner
        sessions[session.id] = session
        return session
    }

    func signOut(_ id: String) { sessions[id] = nil }

    /// How many sessions are held.
    var count: Int { sessions.count }

    func setFlash(_ id: String, _ text: String?) { sessions[id]?.flash = text }

    /// The exercise page was shown to this browser now.
    func startExercise(_ id: String) { sessions[id]?.exerciseStartedAt = .now }

    /// Whether `duration` has passed since this browser opened the exercise page; the start is
    /// used up, so one exercise completes one bypass.
    func finishExercise(_ id: String, lasting duration: Duration) -> Bool {
        guard let started = sessions[id]?.exerciseStartedAt else { return false }
        sessions[id]?.exerciseStartedAt = nil
        return ContinuousClock.now - started >= duration
    }

    /// The flash line, once.
    func takeFlash(_ id: String) -> String? {
        let text = sessions[id]?.flash
        sessions[id]?.flash = nil
        return text
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
