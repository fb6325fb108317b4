/// The one way Scroll Off puts a length of time into words, numbers first: "40 s", "4 min 30 s",
/// "1 h 12 min", "2 d 3 h". The helper's messages, the refusals of the core and the CLI all use
/// it, so the same length reads the same everywhere.
///
/// At most two units are shown; below a minute seconds, below an hour minutes and seconds, below
/// two days hours and minutes, beyond that days and hours. Whatever is not shown is rounded in the
/// caller's chosen direction (see ``Rounding``), so a message never promises an earlier reopening
/// or more time than is true. Calendar-free on purpose: instants are formatted by the CLI in the
/// person's zone.
public enum SpanWords {
    /// Which way the unshown part of a length goes.
    public enum Rounding: Sendable {
        /// Toward zero: for lengths used, held or available ("closed after 4 min", "2 min of
        /// credit"), which must never claim more than there is.
        case down
        /// Away from zero: for waits ("opens in", "until", "for 12 min more"), which must never
        /// promise an earlier instant than the true one.
        case up
    }

    /// `span` in words; milliseconds count toward the rounding.
    public static func describe(_ span: Span, rounding: Rounding = .down) -> String {
        let ms = span.milliseconds
        if ms < 0 { return "-" + describe(Span(milliseconds: -ms), rounding: rounding) }
        let seconds = rounding == .up ? ms / 1000 + (ms % 1000 == 0 ? 0 : 1) : ms / 1000
        return describe(seconds: seconds, rounding: rounding)
    }

    /// `seconds` in words.
    public static func describe(seconds: Int64, rounding: Rounding = .down) -> String {
        if seconds < 0 { return "-" + describe(seconds: -seconds, rounding: rounding) }
        // The unit of the smaller part shown. Rounding to it cannot push past the next boundary:
        // 3600 and 172 800 are whole multiples of the next tier's unit, so the tier still fits.
        let unit: Int64 = seconds < 3600 ? 1 : seconds < 48 * 3600 ? 60 : 3600
        let s = rounding == .up ? (seconds + unit - 1) / unit * unit : seconds / unit * unit
        if s < 60 { return "\(s) s" }
        if s < 3600 { return pair(s / 60, "min", s % 60, "s") }
        if s < 48 * 3600 { return pair(s / 3600, "h", s % 3600 / 60, "min") }
        return pair(s / 86_400, "d", s % 86_400 / 3600, "h")
    }

    private static func pair(_ big: Int64, _ bigUnit: String, _ small: Int64, _ smallUnit: String) -> String {
        small == 0 ? "\(big) \(bigUnit)" : "\(big) \(bigUnit) \(small) \(smallUnit)"
    }
}
