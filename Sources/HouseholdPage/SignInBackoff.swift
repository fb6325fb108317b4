import Foundation
import Store

/// Sign-in tries per owner name (SPEC §9a "sign-ins are rate-limited"), beside the per-device
/// budget of `WebRateLimiter`: a guesser with many addresses (40 addresses gave 200 guesses in
/// 32 s) meets this one bound however many it has.
///
/// The first `freeTries` wrong passwords in a row cost nothing, so an owner's typo is not punished.
/// After that each try must wait twice as long as the one before, from `firstDelay` up to
/// `maximumDelay`: with the defaults (3, 1 s, 5 min) a guesser gets about 20 tries in its first
/// hour and 12 an hour after, while the owner, whose right password waits too (the password is
/// not even checked while the name waits, so a guesser learns nothing from trying), signs in
/// within `maximumDelay`. It is a wait, never a lock: nothing needs root to undo it, and a right
/// password ends it. A name left alone for `forgetAfter` starts afresh.
///
/// A try is counted when it starts, before its password is checked (about 0.1 s of scrypt, one
/// at a time), so tries sent at once cannot all pass before the first failure is known.
///
/// Memory is bounded: at most `maximumTracked` names. Names with a password (the owners) are never
/// the ones dropped, so a spray of made-up names cannot wipe an owner's count; made-up names are
/// tracked too (a guess at one is answered as a guess at an owner, so the answers tell nobody
/// which names have a password).
///
/// On a shared store (`[store] backend = "postgresql"`) the count per name is kept in the
/// household's database (`WebAccountStore`), by its clock: tries through either helper's page
/// count against one wait. While the database cannot be reached, this helper's own count decides.
package actor SignInBackoff {
    package struct Policy: Sendable, Equatable {
        package var freeTries = 3
        package var firstDelay: Duration = .seconds(1)
        package var maximumDelay: Duration = .seconds(300)
        package var forgetAfter: Duration = .seconds(3600)

        package init(freeTries: Int = 3, firstDelay: Duration = .seconds(1), maximumDelay: Duration = .seconds(300),
                     forgetAfter: Duration = .seconds(3600)) {
            self.freeTries = freeTries
            self.firstDelay = firstDelay
            self.maximumDelay = maximumDelay
            self.forgetAfter = forgetAfter
        }
    }

    /// Why a try must wait: how long, and after how many wrong passwords in a row.
    struct Wait: Sendable, Equatable {
        var seconds: Int
        var failures: Int
    }

    private struct Entry {
        /// Tries since the last right password (each counted as wrong until it is known).
        var tries: Int
        /// No try before this.
        var next: ContinuousClock.Instant
        var last: ContinuousClock.Instant
        var owner: Bool
    }

    let policy: Policy
    static let maximumTracked = 1024
    private var entries: [String: Entry] = [:]

    private let shared: (any WebAccountStore)?

    package init(policy: Policy = Policy(), shared: (any WebAccountStore)? = nil) {
        self.policy = policy
        self.shared = shared
    }

    /// How many names are tracked.
    var tracked: Int { entries.count }

    /// The wait after `tries` wrong passwords in a row: none for the free ones, then doubling.
    func delay(after tries: Int) -> Duration {
        guard tries >= policy.freeTries else { return .zero }
        let doublings = tries - policy.freeTries
        // 2^doublings overflows long before it matters; past 40 the cap has long been reached.
        guard doublings < 40 else { return policy.maximumDelay }
        return min(policy.firstDelay * (1 << doublings), policy.maximumDelay)
    }

    /// Counts a try for `name` and returns nil when it may go ahead, or the wait. `owner`: the name
    /// has a password, so its count is never dropped to make room.
    func begin(_ name: String, owner: Bool, now: ContinuousClock.Instant = .now) async -> Wait? {
        if let shared, case .success(let wait) = await beginShared(name, owner: owner, shared) { return wait }
        var entry = entries[name].flatMap { now - $0.last < policy.forgetAfter ? $0 : nil }
            ?? Entry(tries: 0, next: now, last: now, owner: owner)
        entry.owner = owner
        if now < entry.next {
            let left = entry.next - now
            let seconds = Int(left.components.seconds) + (left.components.attoseconds > 0 ? 1 : 0)
            return Wait(seconds: max(1, seconds), failures: entry.tries)
        }
        if entries[name] == nil, entries.count >= Self.maximumTracked { makeRoom(now: now) }
        entry.tries += 1
        entry.last = now
        entry.next = now + delay(after: entry.tries)
        entries[name] = entry
        return nil
    }

    /// The right password for `name`: its count starts again from nothing.
    func succeeded(_ name: String) async {
        entries[name] = nil
        if let shared {
            let forget = WebSessions.milliseconds(policy.forgetAfter)
            _ = await calls.run { () throws(StoreError) in
                try shared.updateSignInTries(name: name, forgetAfterMilliseconds: forget, maximumTracked: Self.maximumTracked) { tries, _ in tries = nil }
            }
        }
    }

    /// `begin` on the database's count, by its clock (the same steps as the memory's).
    private func beginShared(_ name: String, owner: Bool, _ shared: any WebAccountStore) async -> Result<Wait?, StoreError> {
        let policy = self.policy
        let delays = (0...(policy.freeTries + 40)).map { WebSessions.milliseconds(delay(after: $0)) }
        let forget = WebSessions.milliseconds(policy.forgetAfter)
        return await calls.run { () throws(StoreError) in
            try shared.updateSignInTries(name: name, forgetAfterMilliseconds: forget, maximumTracked: Self.maximumTracked) { stored, now -> Wait? in
                var entry = stored.flatMap { now - $0.lastAt < forget ? $0 : nil } ?? SignInTries(tries: 0, nextAt: now, lastAt: now, owner: owner)
                entry.owner = owner
                if now < entry.nextAt {
                    stored = entry
                    let left = entry.nextAt - now
                    return Wait(seconds: max(1, Int((left + 999) / 1000)), failures: entry.tries)
                }
                entry.tries += 1
                entry.lastAt = now
                entry.nextAt = now + delays[min(entry.tries, delays.count - 1)]
                stored = entry
                return nil
            }
        }
    }

    private let calls = WebAccountCalls(label: "scrolloff.web.sign-ins")

    /// Drops names left alone past `forgetAfter`, then names that are not owners and may try now,
    /// then any name that is not an owner's, the least recent first.
    private func makeRoom(now: ContinuousClock.Instant) {
        entries = entries.filter { now - $0.value.last < policy.forgetAfter }
        guard entries.count >= Self.maximumTracked else { return }
        let others = entries.filter { !$0.value.owner }
            .sorted { ($0.value.next <= now ? 0 : 1, $0.value.last) < ($1.value.next <= now ? 0 : 1, $1.value.last) }
        for (name, _) in others.prefix(entries.count - Self.maximumTracked / 2) { entries[name] = nil }
    }
}
