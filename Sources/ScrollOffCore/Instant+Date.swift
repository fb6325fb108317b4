import Foundation

/// The one bridge between `Instant` and Foundation's `Date`: calendar math (`LocalCalendar`,
/// `ZoneClock`), the control API's JSON and the CLI all convert here, so the rounding is the same
/// everywhere.
extension Instant {
    /// The same instant as a Foundation date (exact: whole milliseconds fit a `Double`).
    public var date: Date { Date(timeIntervalSince1970: Double(millisecondsSince1970) / 1000) }

    /// The instant of a Foundation date, rounded to the nearest millisecond.
    public init(date: Date) {
        self.init(millisecondsSince1970: Int64((date.timeIntervalSince1970 * 1000).rounded()))
    }
}
