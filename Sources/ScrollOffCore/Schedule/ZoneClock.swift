import Foundation

/// Local wall time ↔ instants in one IANA zone, with the DST rules of SPEC §2.
///
/// Days are counted as whole local days since 1970-01-01 ("day numbers") with exact integer
/// arithmetic; the zone is only asked for its UTC offset at an instant, so the DST policy is ours
/// and not whatever a calendar library happens to do with a skipped or repeated time.
struct ZoneClock: Sendable {
    let timeZone: TimeZone

    private static let msPerDay: Int64 = 86_400_000

    /// The zone's UTC offset at `t`, in milliseconds.
    func offset(at t: Instant) -> Int64 {
        Int64(timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(t.secondsSince1970)))) * 1000
    }

    /// The local day number containing `t`.
    func dayNumber(containing t: Instant) -> Int64 {
        Self.floorDiv(t.millisecondsSince1970 + offset(at: t), Self.msPerDay)
    }

    /// The instant at which local wall time `minuteOfDay` happens on `day`.
    ///
    /// SPEC §2: a time in a skipped hour (spring forward) resolves to the first valid instant after
    /// it, i.e. the moment of the transition; a time in a repeated hour (fall back) resolves to its
    /// first occurrence. Both starts and ends follow this, which gives exactly the rules the SPEC
    /// states for starts in a gap and ends in a repeat.
    func instant(day: Int64, minuteOfDay: Int) -> Instant {
        // The wall time read as if it were UTC; every real candidate is this minus an offset in use
        // near it. Offsets a day either side cover any single transition.
        let naive = day * Self.msPerDay + Int64(minuteOfDay) * 60_000
        let before = offset(at: Instant(millisecondsSince1970: naive - Self.msPerDay))
        let after = offset(at: Instant(millisecondsSince1970: naive + Self.msPerDay))
        var best: Instant?
        for candidateOffset in [before, after] {
            let t = Instant(millisecondsSince1970: naive - candidateOffset)
            if offset(at: t) == candidateOffset, best.map({ t < $0 }) ?? true { best = t }
        }
        if let best { return best }
        // No instant shows this wall time: it is in a gap. The first valid instant after it is the
        // transition itself; find it between the two readings of the naive time.
        let early = Instant(millisecondsSince1970: naive - after)
        let late = Instant(millisecondsSince1970: naive - before)
        return transition(from: min(early, late), to: max(early, late))
    }

    /// The first instant in `(lo, hi]` whose offset differs from the offset at `lo`, to the second.
    private func transition(from lo: Instant, to hi: Instant) -> Instant {
        let startOffset = offset(at: lo)
        var low = lo.secondsSince1970
        var high = hi.secondsSince1970
        guard offset(at: Instant(secondsSince1970: high)) != startOffset else { return hi }
        while high - low > 1 {
            let mid = low + (high - low) / 2
            if offset(at: Instant(secondsSince1970: mid)) == startOffset { low = mid } else { high = mid }
        }
        return Instant(secondsSince1970: high)
    }

    /// Weekday of a day number: 0 = Sunday … 6 = Saturday (1970-01-01 was a Thursday).
    static func weekday(ofDay day: Int64) -> Int {
        Int(((day % 7) + 7 + 4) % 7)
    }

    static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
        let q = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
    }

    /// Day number of a civil date (proleptic Gregorian), after H. Hinnant's `days_from_civil`.
    static func dayNumber(year: Int, month: Int, day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let m = Int64(month)
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}
