@testable import Engine
@testable import Helper
import ScrollOffCore
import Testing

/// A disk that stays full is said once, then in summaries ever further apart (SPEC §3: the log
/// wrote `timer work failed` once per second, 86,400 lines a day).
@Suite struct CommitHealthTests {
    static let t0 = Instant(secondsSince1970: 1_795_003_200)

    @Test func failures_every_second_for_a_day_log_a_handful_of_lines_with_a_summary() {
        var health = CommitHealth()
        var notes: [CommitHealth.Note] = []
        for second in 0..<86_400 {
            if let note = health.failed("disk full", at: Self.t0 + .seconds(Int64(second))) { notes.append(note) }
        }
        #expect(notes.first == .failing)
        // 1, 2, 4, 8, 16, 32 min, then hourly: 6 + 22 summaries in a day, not 86,400 lines.
        #expect(notes.count < 40, "\(notes.count) lines")
        #expect(notes[1] == .stillFailing(for: .minutes(1), attempts: 61))
        #expect(notes[2] == .stillFailing(for: .minutes(3), attempts: 181))
        #expect(health.isFailing && health.attempts == 86_400)
        #expect(health.succeeded(at: Self.t0 + .hours(24)) == .recovered(after: .hours(24), attempts: 86_400))
        #expect(!health.isFailing && health.succeeded(at: Self.t0 + .hours(25)) == nil)
    }

    @Test func retries_back_off_from_1_s_to_at_most_8_s() {
        var health = CommitHealth()
        var delays: [Int64] = []
        for i in 0..<6 {
            _ = health.failed("disk full", at: Self.t0 + .seconds(Int64(i)))
            delays.append(health.retryDelay.wholeSeconds)
        }
        #expect(delays == [1, 2, 4, 8, 8, 8])
    }
}
