import Foundation
import ScrollOffCore

/// Durations and clock times in the CLI's words: numbers first, local time, no locale surprises.
/// Shared by the CLI and the household page (SPEC §9a), so both say the same thing the same way.
public enum TimeWords {
    /// 4332 → "1 h 12 min"; 270 → "4 min 30 s"; 40 → "40 s"; past two days "12 d 12 h", in the
    /// core's words (`SpanWords`). Lengths used round down; waits (`until`) round up.
    public static func span(seconds: Int64, rounding: SpanWords.Rounding = .down) -> String {
        SpanWords.describe(seconds: max(0, seconds), rounding: rounding)
    }

    /// A balance in minutes and seconds, even above an hour: "75 min 20 s", "0 s".
    public static func balance(seconds: Int64) -> String {
        let s = max(0, seconds)
        if s < 60 { return "\(s) s" }
        return s % 60 == 0 ? "\(s / 60) min" : "\(s / 60) min \(s % 60) s"
    }

    /// "21:42" today, "Mon 07:00" within a week, "2026-12-24 07:00" further away; in the local zone.
    public static func clock(_ instant: Instant, now: Instant) -> String {
        let calendar = Calendar.current
        let date = instant.date
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = calendar.timeZone
        if calendar.isDate(date, inSameDayAs: now.date) {
            formatter.dateFormat = "HH:mm"
        } else if abs(instant.millisecondsSince1970 - now.millisecondsSince1970) < 6 * 86_400_000 {
            formatter.dateFormat = "EEE HH:mm"
        } else {
            formatter.dateFormat = "yyyy-MM-dd HH:mm"
        }
        return formatter.string(from: date)
    }

    /// "21:42 — 1 h 12 min": when, then how long from now.
    public static func until(_ instant: Instant, now: Instant) -> String {
        let wait = instant - now
        return "\(clock(instant, now: now)) — \(SpanWords.describe(wait < .zero ? .zero : wait, rounding: .up))"
    }

    /// Now on this machine: only the fallback for an answer from a helper that sends no `now`;
    /// the helper's trusted time is the one to measure against (SPEC §11).
    public static func now() -> Instant { Instant(date: Date()) }
}

