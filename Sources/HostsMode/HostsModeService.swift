import Enforcement
import Engine
import HostsFile
import ServiceKit
import Store
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
///
/// A hand edit is told from a rule change by the section's bytes: the service remembers the section
/// it left in the file, and a check that finds anything else there (lines gone or added, the section
/// deleted or moved down) and puts it back records one tamper event (``HostsSectionEdit``). So an
/// edit is recorded once however many inotify wakes it causes, and the helper's own writes, which
/// wake the watcher too, record nothing.
package final class HostsModeService: Service, Sendable {
    /// The longest sleep between two checks of the file.
    static let recheckInterval = Span.seconds(30)
    /// While another program holds the file open for writing, how often to look again, and for how
    /// long at most: the rules must be in force again before long even if it never closes the file.
    static let writerPoll = Span(milliseconds: 250)
    static let writerPatience = Duration.seconds(10)

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
    /// Records a hand edit that was put back (the engine's tamper event).
    let recordEdit: @Sendable (HostsSectionEdit) async -> Void

    package init(path: String, status: HostsModeStatus, logger: Logger, cacheFlush: LocalCacheFlush = .system,
         recordEdit: @escaping @Sendable (HostsSectionEdit) async -> Void = { _ in },
         firstAttempt: @escaping @Sendable () -> Void = {}) {
        writer = HostsFileWriter(path: path)
        self.recordEdit = recordEdit
        self.cacheFlush = cacheFlush
        self.status = status
        self.logger = logger
        self.firstAttempt = firstAttempt
    }

    /// The engine's publish handler calls this; the write happens on the service's own task.
    package func published(_ enforcement: Enforcement) {
        latest.withLock { $0 = enforcement }
        changed.notify()
    }

    /// Whether writes are failing now, for `doctor` and tests: since when, how many attempts, the error.
    var failure: (since: Instant, attempts: Int, error: String)? {
        health.withLock { h in h.failingSince.map { ($0, h.attempts, h.lastError ?? "unknown") } }
    }

    package func run() async throws {
        let watcher = HostsFileWatcher(path: writer.path) { [weak self] in
            self?.changed.notify()
        }
        if watcher == nil { logger.notice("cannot watch the hosts file with inotify; hand edits are put back within 30 s", metadata: ["hosts.file": "\(writer.path)"]) }
        let timer = RelativeWakeTimer { [weak self] in self?.changed.notify() }
        defer {
            watcher?.stop()
            timer?.stop()
        }
        let leftovers = writer.removeLeftovers()
        if leftovers > 0 { logger.notice("removed temporary files of an interrupted hosts-file write", metadata: ["count": "\(leftovers)"]) }
        await cancelWhenGracefulShutdown {
            var memory = Memory()
            var reportedReady = false
            while !Task.isCancelled {
                guard let enforcement = self.latest.withLock({ $0 }) else {
                    await self.changed.wait()
                    continue
                }
                let now = enforcement.now()
                let (delay, edit) = self.apply(enforcement, now: now, memory: &memory)
                if !reportedReady {
                    reportedReady = true
                    self.firstAttempt()
                }
                if let edit {
                    self.status.restored(at: now)
                    await self.recordEdit(edit)
                }
                await self.sleep(for: delay, timer: timer)
            }
        }
    }

    /// One check: writes the section if its bytes differ. Returns how long to sleep before the
    /// next, and the hand edit it put back, if it did.
    func apply(_ enforcement: Enforcement, now: Instant, memory: inout Memory) -> (Span, HostsSectionEdit?) {
        let names = memory.names.names(enforcement, at: now)
        do {
            // Measured on the monotonic clock: a wall clock set back while waiting must not extend the wait.
            let waited = memory.writersSince.map { ContinuousClock.now - $0 }
            let patient = waited.map { $0 < Self.writerPatience } ?? true
            let applied = try writer.apply(waitForWriters: patient) { lineBreak in memory.section(names, lineBreak: lineBreak) }
            if case .writersOpen(let pids) = applied.outcome {
                if memory.writersSince == nil {
                    memory.writersSince = ContinuousClock.now
                    logger.notice("another program is writing the hosts file; the section goes back once it is done", metadata: [
                        "hosts.file": "\(writer.path)", "pids": "\(pids.map(String.init).joined(separator: ","))",
                    ])
                }
                return (Self.writerPoll, nil)
            }
            if let waited, !patient {
                logger.warning("another program kept the hosts file open for writing; the section is put back anyway", metadata: [
                    "hosts.file": "\(writer.path)", "waited_s": "\(waited.components.seconds)",
                ])
            }
            memory.writersSince = nil
            var edit: HostsSectionEdit?
            if case .written(let inPlace) = applied.outcome {
                cacheFlush.run(logger: logger)
                edit = memory.left.flatMap { Self.edit(found: applied.previous, left: $0, path: writer.path) }
                if edit == nil {
                    logger.info("hosts file section rewritten", metadata: [
                        "hosts.file": "\(writer.path)", "hosts.names": "\(names.list.count)", "hosts.in_place": "\(inPlace)",
                    ])
                }
            }
            memory.left = applied.section
            if let note = health.withLock({ $0.succeeded(at: now) }), case .recovered(let after, let attempts) = note {
                logger.notice("hosts file written again", metadata: [
                    "hosts.file": "\(writer.path)", "failing.for_s": "\(after.milliseconds / 1000)", "attempts": "\(attempts)",
                ])
            }
            // The user's own lines are read again only when they or the names changed (a bind-mounted
            // file edited through another path wakes no watcher: the periodic check sees it).
            let outside = Array(applied.previous.before) + Array(applied.previous.after)
            if memory.userLinesFor != names.generation || outside != memory.outside {
                memory.userLinesFor = names.generation
                memory.outside = outside
                let sectionLines = applied.section.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
                let lines = applied.previous.linesNaming(names.set, firstLine: sectionLines + 1)
                if lines != memory.userLines, !lines.isEmpty {
                    logger.warning("lines of your own in the hosts file open blocked names", metadata: [
                        "hosts.file": "\(writer.path)", "hosts.lines": "\(lines.map(\.description).joined(separator: "; "))",
                    ])
                }
                memory.userLines = lines
            }
            status.succeeded(names: names.list.count, userLines: memory.userLines,
                             strictCurfew: enforcement.hasStrictCurfew(profile: 0),
                             strictCurfewInForce: enforcement.isStrictCurfew(profile: 0, now: now))
            return (Self.nextCheck(enforcement, now: now), edit)
        } catch {
            // Logged once, then as a summary with back-off (as the engine's commits): a read-only /etc
            // or a damaged section would otherwise log every second.
            let (note, delay, since, attempts) = health.withLock { h in
                (h.failed(error.description, at: now), h.retryDelay, h.failingSince ?? now, h.attempts)
            }
            status.failing(since: since, attempts: attempts, error: error.description, fix: error.fix)
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
            return (delay, nil)
        }
    }

    /// The hand edit a write just undid: the file held something other than the section the
    /// helper left there (`left`), or held it further down. Nil when it was as left, which is
    /// the case for every write a rule change makes.
    static func edit(found: HostsLayout, left: [UInt8], path: String) -> HostsSectionEdit? {
        let managed = found.managed
        if managed.elementsEqual(left) {
            guard !left.isEmpty, !found.sectionIsFirst else { return nil }
            return HostsSectionEdit(file: path, linesRemoved: 0, linesAdded: 0, sectionRemoved: false, moved: true)
        }
        if left.isEmpty {
            // No section was left, and someone wrote one: its lines are all theirs.
            return HostsSectionEdit(file: path, linesRemoved: 0, linesAdded: Self.lines(managed).count, sectionRemoved: false, moved: false)
        }
        if found.section == nil {
            return HostsSectionEdit(file: path, linesRemoved: Self.lines(left[...]).count, linesAdded: 0, sectionRemoved: true, moved: false)
        }
        // Counted as sets of lines: what matters is which lines went or came, not their order.
        let was = Set(Self.lines(left[...])), now = Set(Self.lines(managed))
        return HostsSectionEdit(file: path, linesRemoved: was.subtracting(now).count, linesAdded: now.subtracting(was).count,
                                sectionRemoved: false, moved: !found.sectionIsFirst)
    }

    static func lines(_ bytes: ArraySlice<UInt8>) -> [ArraySlice<UInt8>] {
        bytes.split(separator: 0x0A).map { $0.last == 0x0D ? $0.dropLast() : $0 }
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
    /// (On the kernel's relative clock: see ``RelativeWakeTimer``.)
    private func sleep(for delay: Span, timer: RelativeWakeTimer?) async {
        guard let timer else {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { try? await Task.sleep(for: .milliseconds(delay.milliseconds)) }
                group.addTask { await self.changed.wait() }
                await group.next()
                group.cancelAll()
            }
            return
        }
        timer.arm(milliseconds: delay.milliseconds)
        await changed.wait()
    }

    /// What the service carries from one check to the next.
    struct Memory {
        var names = NamesCache()
        /// The section bytes the helper left in the file at the last good check (nil before the
        /// first): anything else found there later was put there by someone else.
        var left: [UInt8]?
        /// The rendered section for the names of `rendered.generation`, per line break, so a check
        /// that changes nothing renders nothing (100,000 names take tens of milliseconds to render).
        var rendered: (generation: Int, lineBreak: HostsLayout.LineBreak, bytes: [UInt8])?
        var userLines: [HostsUserLine] = []
        /// The names' generation and the bytes outside the section that `userLines` was found in.
        var userLinesFor = -1
        var outside: [UInt8] = []
        /// Since when another program has held the file open for writing, while the helper waits.
        var writersSince: ContinuousClock.Instant?

        mutating func section(_ names: Names, lineBreak: HostsLayout.LineBreak) -> [UInt8] {
            if let rendered, rendered.generation == names.generation, rendered.lineBreak == lineBreak { return rendered.bytes }
            let bytes = HostsSection.render(names: names.list, excluding: HostsModeService.canaries, lineBreak: lineBreak)
            rendered = (names.generation, lineBreak, bytes)
            return bytes
        }
    }

    /// The names to write, deduplicated, with a number that changes whenever they do.
    struct Names {
        var list: [String] = []
        var set: Set<String> = []
        var generation = 0
    }

    /// The names of the blocking entries (every entry during a strict curfew), recomputed only when
    /// the blocking entries or the matcher change: a window edge of one entry does not walk a
    /// 100,000-name list again.
    struct NamesCache {
        var key: (matcher: ObjectIdentifier, entries: [Int])?
        var value = Names()

        mutating func names(_ enforcement: Enforcement, at now: Instant) -> Names {
            let entries = enforcement.hostsEntries(profile: 0, at: now)
            let matcher = ObjectIdentifier(enforcement.matcher)
            if let key, key.matcher == matcher, key.entries == entries { return value }
            // Deduplicated once here, so the count `doctor` shows is the section's.
            let set = Set(enforcement.hostsNames(profile: 0, at: now)).subtracting(HostsModeService.canaries)
            value = Names(list: Array(set), set: set, generation: value.generation + 1)
            key = (matcher, entries)
            return value
        }
    }
}
