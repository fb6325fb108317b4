/// The minutes of a week (10,080) that a schedule's windows cover on the wall clock. Comparing
/// coverages answers "does the edited window cover less?" for every kind of edit at once: a
/// shortened end, a later start, a moved window, a removed day (SPEC §3).
struct WeekCoverage: Equatable {
    private static let minutesPerWeek = 7 * 1440
    private var words = [UInt64](repeating: 0, count: (minutesPerWeek + 63) / 64)

    init(_ schedule: Schedule) {
        for day in 0..<7 where schedule.days.contains(.day(number: day)) {
            let first = day * 1440 + schedule.start.minuteOfDay
            for offset in 0..<schedule.lengthInMinutes {
                // A Saturday window crossing midnight ends on Sunday morning: wrap around the week.
                let minute = (first + offset) % Self.minutesPerWeek
                words[minute / 64] |= 1 << UInt64(minute % 64)
            }
        }
    }

    /// Whether every minute covered here is also covered by `other`.
    func isSubset(of other: WeekCoverage) -> Bool {
        zip(words, other.words).allSatisfy { $0 & ~$1 == 0 }
    }
}
