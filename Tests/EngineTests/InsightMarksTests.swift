import ControlAPI
@testable import Engine
import ControlServer
import Foundation
@testable import Helper
import ScrollOffCore
@testable import Store
import Testing
import TestSupport

/// SPEC §7: milestones and the weekly digest are written once, whatever restarts and
/// recomputations follow; a digest missed while the helper was down comes at the next start.
@Suite("Insight marks: milestones and the weekly digest, once each")
struct InsightMarksTests {
    static func events(_ engine: HelperEngine, _ kind: EventKind) async throws -> [EventReport] {
        try await engine.events().map(EventReport.init).filter { $0.kind == kind.rawValue }
    }

    @Test func seven_day_streak_milestone_is_recorded_once_across_ticks_and_restarts() async throws {
        let dir = Fixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let time = TestTimeSource(wall: Fixture.noon) // Wednesday 2026-11-18 12:00 UTC
        do {
            let engine = try await Fixture.start(dir, time)
            _ = try await engine.block(["instagram"])
            try await engine.tick()
            #expect(try await Self.events(engine, .milestone).isEmpty)
            // Day 6 of the streak, and 120 h protected: the 100 h milestone only.
            time.pass(.hours(24 * 5))
            try await engine.tick()
            #expect(try await Self.events(engine, .milestone).map(\.message) == ["100 hours protected in all. That is time you kept for yourself."])
            // Tuesday 2026-11-24 is day 7.
            time.pass(.hours(24))
            try await engine.tick()
            let milestones = try await Self.events(engine, .milestone)
            #expect(milestones.count == 2)
            #expect(milestones.last?.message == "7 days in a row kept your streak. Well done.")
            // Stats say it too, and asking again writes nothing more.
            #expect(try await engine.stats(.week).milestones.map(\.key) == ["streak-7-from-2026-11-18", "protected-100h"])
            time.pass(.minutes(11))
            try await engine.tick()
            try await engine.tick()
            #expect(try await Self.events(engine, .milestone).count == 2)
        }
        // A restart recomputes everything from the store and finds the mark.
        time.pass(.minutes(30))
        let engine = try await Fixture.start(dir, time)
        try await engine.tick()
        #expect(try await Self.events(engine, .milestone).count == 2)
    }

    @Test func digest_missed_while_the_helper_was_down_is_written_once_at_the_next_start() async throws {
        let dir = Fixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let time = TestTimeSource(wall: Fixture.noon) // Wednesday 2026-11-18 12:00 UTC (the profile's zone)
        do {
            let engine = try await Fixture.start(dir, time)
            _ = try await engine.block(["instagram"])
            try await engine.tick()
            // The latest Sunday evening (11-15) is before anything was recorded: no digest.
            #expect(try await Self.events(engine, .weeklyDigest).isEmpty)
            #expect(try await engine.digest().digest == nil)
            #expect(try await engine.digest().nextAt == Instant(secondsSince1970: 1_795_374_000)) // Sun 2026-11-22 19:00 UTC
            // Two hours protected while it runs.
            time.pass(.hours(2))
            try await engine.tick()
        }
        // Down over Sunday 19:00; back on Monday 2026-11-23 at 08:00.
        time.pass(.hours(24 * 4 + 18))
        do {
            let engine = try await Fixture.start(dir, time)
            try await engine.tick()
            let digests = try await Self.events(engine, .weeklyDigest)
            #expect(digests.count == 1)
            let digest = try #require(try await engine.digest().digest)
            #expect(digest.firstDay == "2026-11-16" && digest.lastDay == "2026-11-22" && digest.period == .week)
            #expect(digest.protectedSeconds == 7200 && digest.streakDays == 5)
            #expect(digests.first?.message?.hasPrefix("Your week 2026-11-16 to 2026-11-22: ") == true)
            try await engine.tick()
        }
        time.pass(.minutes(15))
        let engine = try await Fixture.start(dir, time)
        try await engine.tick()
        #expect(try await Self.events(engine, .weeklyDigest).count == 1)
        // The next one is due on time: the timer wakes at Sunday 19:00 exactly.
        let sunday = Instant(secondsSince1970: 1_795_978_800) // 2026-11-29 19:00 UTC
        time.pass(sunday - (await engine.trustedNow()))
        #expect(try #require(await engine.nextDueInstant()) <= sunday)
        try await engine.tick()
        let digests = try await Self.events(engine, .weeklyDigest)
        #expect(digests.count == 2)
        #expect(try await engine.digest().digest?.lastDay == "2026-11-29")
    }

    @Test func digest_hook_gets_the_digest_on_stdin_without_a_shell() async throws {
        let dir = Fixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let script = dir + "/hook"
        let out = dir + "/out; touch injected $(id)" // one argument, as no shell would leave it
        try "#!/bin/sh\ncat > \"$1\"\nprintf '%s\\n' \"$SCROLLOFF_PROFILE\" \"$SCROLLOFF_DIGEST\" >> \"$1\"\n"
            .write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o755)
        var settings = DigestHookSettings()
        settings.command = [script, out]
        let log = CapturedLog()
        await DigestHook.deliver(try Self.sampleReport(), settings: settings, logger: log.logger())
        let text = try String(contentsOfFile: out, encoding: .utf8)
        #expect(text.contains("\"urges_resisted\":3"))
        #expect(text.contains("\nhome\nYou resisted 3 of 4 urges today"))
        #expect(!FileManager.default.fileExists(atPath: "injected"))
        #expect(log.lines.filter { $0.hasPrefix("warning") }.isEmpty)
    }

    @Test func digest_hook_that_hangs_is_stopped_at_its_timeout_and_logged_once() async throws {
        let dir = Fixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let script = dir + "/hang"
        try "#!/bin/sh\nexec sleep 60\n".write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o755)
        var settings = DigestHookSettings()
        settings.command = [script]
        settings.timeout = .seconds(1)
        let log = CapturedLog()
        await DigestHook.deliver(try Self.sampleReport(), settings: settings, logger: log.logger())
        // Stopped (SIGTERM at 1 s, SIGKILL at 3 s if ignored): the warning is only written when the
        // watchdog signalled the hook before it exited. No wall-clock bound: a full run once held
        // this test's task off the cooperative pool for minutes while blocking end-to-end suites
        // ran, though the watchdog (on Dispatch) had done its job at 1 s.
        #expect(log.lines.filter { $0.hasPrefix("warning") } == ["warning digest hook was stopped after 1 s"])

        var failing = DigestHookSettings()
        failing.command = ["/bin/false"]
        let log2 = CapturedLog()
        await DigestHook.deliver(try Self.sampleReport(), settings: failing, logger: log2.logger())
        #expect(log2.lines == ["warning digest hook failed with exit status 1"])
    }

    /// Found after the digest was built (SPEC §7): a check that keeps failing (here the marks cannot be written, as on a
    /// full disk) was a warning at every 10-minute check, 144 a day. Now it is said once, then in
    /// summaries ever further apart (`CommitHealth`, as for state writes), and its recovery once.
    @Test func insight_checks_failing_for_6_hours_log_once_then_summaries_ever_further_apart() async throws {
        let dir = Fixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let time = TestTimeSource(wall: Fixture.noon)
        let log = CapturedLog()
        let engine = try await HelperEngine.start(configuration: Fixture.configuration(dir), timeSource: time, logger: log.logger())
        _ = try await engine.block(["instagram"])
        try await engine.tick()
        try await engine.failInsightMarks()
        // 120 h protected: the 100 h milestone is due at every check, and cannot be written.
        time.pass(.hours(24 * 5))
        try await engine.tick()
        for _ in 0..<36 {
            time.pass(.minutes(10))
            try await engine.tick()
        }
        let warnings = log.lines.filter { $0.hasPrefix("warning") }
        // 37 failed checks in 6 h: the first, then summaries 10, 20, 40 and 60 min apart.
        #expect(warnings.count == 8, "\(warnings)")
        #expect(warnings.first?.hasPrefix("warning milestones and the weekly digest could not be recorded; checking again every 10 min") == true,
                "\(warnings)")
        #expect(warnings.dropFirst().first == "warning milestones and the weekly digest still cannot be recorded after 10 min, 2 attempts")
        #expect(warnings.dropFirst(2).first == "warning milestones and the weekly digest still cannot be recorded after 30 min, 4 attempts")
        #expect(try await Self.events(engine, .milestone).isEmpty)

        // Writable again: the milestone is written at the next check, and the recovery said once.
        try await engine.restoreInsightMarks()
        time.pass(.minutes(10))
        try await engine.tick()
        #expect(try await Self.events(engine, .milestone).count == 1)
        #expect(log.lines.filter { $0.hasPrefix("notice insights are recorded again after") }.count == 1, "\(log.lines)")
        time.pass(.minutes(10))
        try await engine.tick()
        #expect(log.lines.filter { $0.hasPrefix("warning") }.count == 8)
    }

    static func sampleReport() throws -> StatsReport {
        var day = InsightDay(day: LocalCalendar.Day(year: 2026, month: 11, day: 22))
        day.urges = 4
        day.resisted = 3
        day.protectedSeconds = 3600
        let calendar = try #require(LocalCalendar(identifier: "UTC"))
        return HelperEngine.report(.day, profile: "home", days: [day], today: day.day, calendar: calendar)
    }
}

extension HelperEngine {
    /// Makes writing an insight mark fail, as a full disk does, while every other write succeeds.
    func failInsightMarks() throws {
        try sqliteStore.queue.writeWithoutTransaction { db in
            try db.execute(sql: "CREATE TEMP TRIGGER fail_marks BEFORE INSERT ON insight_marks BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END;")
        }
    }

    func restoreInsightMarks() throws {
        try sqliteStore.queue.writeWithoutTransaction { db in try db.execute(sql: "DROP TRIGGER fail_marks;") }
    }
}
