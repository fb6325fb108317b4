import HostsFile
import Logging
import ScrollOffCore
import ServiceLifecycle
import Sinkhole
import Synchronization

/// Keeps the managed section of the hosts file equal to what the rules block for the default
/// profile (SPEC §10): the profile that covers this machine, since a hosts file answers only the
/// machine it is on.
///
/// It rewrites at once on every enforcement the engine publishes (a block, an unblock, a grant, a
/// list refresh: within 1 s of the change), and wakes by itself at the snapshot's `validUntil` (the
/// next window, curfew or grant edge), so an edge is on time even if no publish came. It also checks
/// the file at least every ``recheckInterval``, which catches up after a suspend and puts back a
/// section edited by hand. The file is written only when its bytes would change.
final class HostsModeService: Service, Sendable {
    /// The longest sleep between two checks of the file.
    static let recheckInterval = Span.seconds(30)

    let writer: HostsFileWriter
    let logger: Logger
    /// Called once, after the first attempt (written or not), for readiness.
    let firstAttempt: @Sendable () -> Void
    /// What `doctor` reads.
    let status: HostsModeStatus
    /// Run after every write: nscd and systemd-resolved caches.
    let cacheFlush: LocalCacheFlush
    private let latest = Mutex<Enforcement?>(nil)
    private let changed = ChangeSignal()
    private let health = Mutex(CommitHealth())
    /// Set by the watcher: the next write, if any, puts back a section someone else changed.
    private let editedElsewhere = Atomic<Bool>(false)

    init(path: String, status: HostsModeStatus, logger: Logger, cacheFlush: LocalCacheFlush = .system,
         firstAttempt: @escaping @Sendable () -> Void = {}) {
        writer = HostsFileWriter(path: path)
        self.cacheFlush = cacheFlush
        self.status = status
        self.logger = logger
        self.firstAttempt = firstAttempt
    }

    /// The engine's publish handler calls this; the write happens on the service's own task.
    func published(_ enforcement: Enforcement) {
        latest.withLock { $0 = enforcement }
        changed.notify()
    }

    /// Whether writes are failing now, for `doctor` and tests: since when, how many attempts, the error.
    var failure: (since: Instant, attempts: Int, error: String)? {
        health.withLock { h in h.failingSince.map { ($0, h.attempts, h.lastError ?? "unknown") } }
    }

    func run() async throws {
        let watcher = HostsFileWatcher(path: writer.path) { [weak self] in
            self?.editedElsewhere.store(true, ordering: .relaxed)
            self?.changed.notify()
        }
        if watcher == nil { logger.notice("cannot watch the hosts file with inotify; hand edits are put back within 30 s", metadata: ["hosts.file": "\(writer.path)"]) }
        defer { watcher?.stop() }
        let leftovers = writer.removeLeftovers()
        if leftovers > 0 { logger.notice("removed temporary files of an interrupted hosts-file write", metadata: ["count": "\(leftovers)"]) }
        await cancelWhenGracefulShutdown {
            var names = NamesCache()
            var reportedReady = false
            while !Task.isCancelled {
                guard let enforcement = self.latest.withLock({ $0 }) else {
                    await self.changed.wait()
                    continue
                }
                let now = enforcement.now()
                let delay = self.apply(enforcement, now: now, names: &names)
                if !reportedReady {
                    reportedReady = true
                    self.firstAttempt()
                }
                await self.sleep(for: delay)
            }
        }
    }

    /// One check: writes the section if its bytes differ. Returns how long to sleep before the next.
    func apply(_ enforcement: Enforcement, now: Instant, names: inout NamesCache) -> Span {
        let wanted = names.names(enforcement, at: now)
        let edited = editedElsewhere.exchange(false, ordering: .relaxed)
        do {
            let outcome = try writer.setSection(names: wanted, excluding: Self.canaries)
            if case .written(let inPlace) = outcome {
                cacheFlush.run(logger: logger)
                logger.info(edited ? "hosts file changed outside Scroll Off: section put back" : "hosts file section rewritten", metadata: [
                    "hosts.file": "\(writer.path)", "hosts.names": "\(wanted.count)", "hosts.in_place": "\(inPlace)",
                ])
            }
            if let note = health.withLock({ $0.succeeded(at: now) }), case .recovered(let after, let attempts) = note {
                logger.notice("hosts file written again", metadata: [
                    "hosts.file": "\(writer.path)", "failing.for_s": "\(after.milliseconds / 1000)", "attempts": "\(attempts)",
                ])
            }
            status.succeeded(names: wanted.count)
            return Self.nextCheck(enforcement, now: now)
        } catch {
            // Logged once, then as a summary with back-off (as the engine's commits): a read-only /etc
            // or a damaged section would otherwise log every second.
            let (note, delay, since, attempts) = health.withLock { h in
                (h.failed(error.description, at: now), h.retryDelay, h.failingSince ?? now, h.attempts)
            }
            status.failing(since: since, attempts: attempts, error: error.description)
            switch note {
            case .failing:
                logger.error("cannot update the hosts file; retrying", metadata: ["hosts.file": "\(writer.path)", "error": "\(error)"])
            case .stillFailing(let span, let attempts):
                logger.error("still cannot update the hosts file", metadata: [
                    "hosts.file": "\(writer.path)", "failing.for_s": "\(span.milliseconds / 1000)", "attempts": "\(attempts)", "error": "\(error)",
                ])
            case .recovered, nil:
                break
            }
            return delay
        }
    }

    /// The snapshot's next edge (just after it, so the new state is in force), at most ``recheckInterval``.
    static func nextCheck(_ enforcement: Enforcement, now: Instant) -> Span {
        var delay = recheckInterval
        if let edge = enforcement.snapshot.validUntil {
            delay = min(delay, max(edge - now + Span(milliseconds: 1), Span(milliseconds: 1)))
        }
        return delay
    }

    static let canaries = Set(CanaryLink.canaryNames)

    /// Sleeps for `delay` or until the next publish, whichever comes first.
    private func sleep(for delay: Span) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await Task.sleep(for: .milliseconds(delay.milliseconds)) }
            group.addTask { await self.changed.wait() }
            await group.next()
            group.cancelAll()
        }
    }

    /// The names of the blocking entries, recomputed only when the blocking entries or the
    /// matcher change: a window edge of one entry does not walk a 100,000-name list again.
    struct NamesCache {
        var key: (matcher: ObjectIdentifier, blocking: [Int])?
        var value: [String] = []

        mutating func names(_ enforcement: Enforcement, at now: Instant) -> [String] {
            let blocking = enforcement.tables.entries.indices.filter {
                enforcement.snapshot.kind(profile: 0, entry: $0, now: now).isBlocking
            }
            let matcher = ObjectIdentifier(enforcement.matcher)
            if let key, key.matcher == matcher, key.blocking == blocking { return value }
            // Deduplicated once here, so the count `doctor` shows is the section's.
            value = Array(Set(enforcement.hostsNames(profile: 0, at: now)).subtracting(HostsModeService.canaries))
            key = (matcher, blocking)
            return value
        }
    }
}
