import ControlAPI
import Enforcement
import Logging
import ScrollOffCore
import ServiceLifecycle
import Store

extension HelperEngine: Service {
    /// The timer loop (SPEC §3: timers fire at the next instant ScrollOffCore computes, not by
    /// polling). Sleeps until ``nextDueInstant()`` or until a command or an urge wakes it, then
    /// runs ``tick()``. Ends on cancellation or graceful shutdown, writing pending urges first.
    public func run() async throws {
        await cancelWhenGracefulShutdown {
            // A weekly digest missed while the helper was down is written now, at the start, and
            // handed to the hook the configuration (applied before the services run) names.
            await self.deliverDigests(self.recordInsightMarks(now: self.advanceClock()))
            while !Task.isCancelled {
                await self.sleepUntilDue()
                guard !Task.isCancelled else { break }
                do {
                    try await self.tick()
                } catch {
                    // A failed write leaves the held state as it was (the enforcement was still
                    // published) and is logged with back-off by `commit`; retry the same work after
                    // a pause that grows with the failures.
                    let delay = await self.books.health.retryDelay
                    try? await Task.sleep(for: .milliseconds(delay.milliseconds))
                }
            }
            try? await self.flushUrges()
            await self.settleSpendsAtStop()
        }
        // No digest hook outlives the helper: SIGTERM, and SIGKILL only after the grace time.
        await runningHooks.stopAll()
    }

    /// The earliest instant anything is due: a wallet's next award, expiry or grant end, the
    /// snapshot's `validUntil` (window and grant edges), a curfew reminder, a local midnight, or
    /// the pending urge batch. Nil when nothing is scheduled (then only a wake ends the sleep).
    public func nextDueInstant() -> Instant? {
        var due: Instant?
        func consider(_ t: Instant?) { if let t, due.map({ t < $0 }) ?? true { due = t } }
        let now = clock.now
        for p in profiles {
            consider(p.account.wallet.nextDueInstant)
            consider(p.rules.nextCurfewReminder(after: p.reminderCursor)?.remindAt)
            consider(p.calendar.nextMidnight(after: now))
            consider(WeeklyDigest.next(after: now, calendar: p.calendar))
        }
        let snapshot = box.enforcement.snapshot
        consider(snapshot.validUntil)
        consider(snapshot.refreshAt)
        consider(urges.flushDue)
        for held in configuredProfiles.dues { consider(held) }
        consider(requests.nextExpiry)
        // A running spend is committed at least every `spendCheckpoint`: a helper that dies (kill -9,
        // a power cut) is charged up to its last commit and nothing after (SPEC §4), so this bounds
        // the time a pulled plug can leave unpaid.
        if let last = books.lastCommitAt, profiles.contains(where: { $0.account.wallet.runningSpend != nil }) {
            consider(last + Self.spendCheckpoint)
        }
        // Held changes wait for the disk: retry now (the loop's back-off paces it).
        if books.held != nil { consider(now) }
        return due
    }

    /// Whether the timer's writes are failing now, for `doctor`: since when, how many attempts, the error.
    package func writeFailure() -> (since: Instant, attempts: Int, error: String)? {
        guard let since = books.health.failingSince else { return nil }
        return (since, books.health.attempts, books.health.lastError ?? "unknown")
    }

    /// One wake: advances the trusted clock by the boot clock (recording a tamper event on a
    /// jump), settles every wallet (awards, expiries, grant ends at zero credit), emits due curfew
    /// reminders, writes the urge batch, commits, and publishes the new enforcement at once, so a
    /// spend running out blocks again within the 250 ms of SPEC §4.
    public func tick() throws(EngineError) {
        let now = advanceClock()
        var change = StateChange()
        var work = profiles
        for i in work.indices {
            var cursor = work[i].reminderCursor
            // SPEC §12: focus sessions that ended since the last tick, as `focusEnded` events.
            for event in RuleChanges.focusEnds(of: work[i], after: cursor, through: now) { change.append(.appendEvent(event)) }
            while let r = work[i].rules.nextCurfewReminder(after: cursor), r.remindAt <= now {
                // A reminder whose curfew already started (the helper was asleep) has no use any more.
                if now < r.occurrence.start { change.append(.appendEvent(StoredEvent(r, profile: work[i].name))) }
                cursor = r.remindAt
            }
            work[i].reminderCursor = max(cursor, now)
        }
        let batch = urges.drain()
        for u in batch where work.contains(where: { $0.name == u.profile }) { change.append(.appendEvent(Self.event(u))) }
        do {
            try commit(&change, profiles: &work, now: now)
        } catch {
            urges.restore(batch)
            // Time-driven changes never wait for the disk (SPEC §3): publish what the wallets and
            // rules say now (`rebuild` settles the wallets on a copy); the books are written by the retry.
            rebuild(now: now)
            throw error
        }
        if now >= nextRetentionAt { applyRetention(now: now) }
        applyHeldBackProfilesIfDue(now: now)
        applyHeldUnknownDevicesIfDue(now: now)
        expireTimeRequestsIfDue(now: now)
        if now >= insightChecks.nextAt { deliverDigests(recordInsightMarks(now: now)) }
    }

    /// Writes the pending urges now (before `events` or `stats` read them).
    func flushUrges() throws(EngineError) {
        // A clock jump seen since the last commit is written with the batch (or alone), so a read of
        // events or stats right after the jump already shows its tamper event (SPEC §11).
        let now = advanceClock()
        let batch = urges.drain()
        guard !batch.isEmpty || !books.jumps.isEmpty else { return }
        var change = StateChange()
        for u in batch where profiles.contains(where: { $0.name == u.profile }) { change.append(.appendEvent(Self.event(u))) }
        do { _ = try commitReturning(change, now: now) } catch {
            urges.restore(batch)
            throw error
        }
    }

    /// How often a running spend is committed (``nextDueInstant()``).
    static let spendCheckpoint = Span.seconds(30)

    /// At a graceful stop a running spend is charged up to the stop and the anchor written then,
    /// so the next start, which ends it where the helper last ran (SPEC §4: nothing charged for the
    /// downtime), ends it exactly at the stop. A failed write leaves it to the last commit.
    func settleSpendsAtStop() {
        guard profiles.contains(where: { $0.account.wallet.runningSpend != nil }) else { return }
        let now = advanceClock()
        var change = StateChange()
        var work = profiles
        _ = try? commit(&change, profiles: &work, now: now)
    }

    /// The stored form of an urge (SPEC §7); the client address is kept for urges only (SPEC §9 privacy).
    /// Urges of a profile removed meanwhile are dropped by the callers.
    static func event(_ u: PendingUrge) -> StoredEvent {
        StoredEvent(profile: u.profile, time: u.time, kind: .urge, entry: u.entry, clientIP: u.client,
                    message: "\(u.entry) was asked for and stayed blocked.")
    }

    /// Called from the DNS path when a query finds the snapshot due for a rebuild.
    public nonisolated func wakeForRebuild() {
        Task { await self.wake() }
    }

    /// Ends the timer's sleep early: a command changed what is due.
    public func wake() {
        if let c = wakeContinuation {
            wakeContinuation = nil
            c.resume()
        } else {
            wakeRequested = true
        }
    }

    /// Sleeps until the next due instant (measured on the trusted clock, which runs on the boot
    /// clock like `ContinuousClock`), a wake, or cancellation.
    func sleepUntilDue() async {
        if wakeRequested {
            wakeRequested = false
            return
        }
        let now = advanceClock()
        // A jump seen just now is recorded at once rather than at the next due instant.
        guard books.jumps.isEmpty else { return }
        let timer: Task<Void, Never>? = nextDueInstant().map { due in
            let delay = max(0, (due - now).milliseconds)
            return Task { [weak self] in
                guard (try? await Task.sleep(for: .milliseconds(delay))) != nil else { return }
                await self?.wake()
            }
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in wakeContinuation = c }
        } onCancel: {
            Task { [weak self] in await self?.wake() }
        }
        timer?.cancel()
    }
}
