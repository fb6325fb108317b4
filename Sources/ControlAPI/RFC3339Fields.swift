/// The fields of an RFC 3339 timestamp (`2026-11-21T18:00:00Z`, fractions and an offset allowed,
/// RFC 3339 §5.6), checked against the calendar before a formatter sees the text. Foundation's
/// ISO 8601 parsers are lenient: `2026-02-30` became March 2, `T25:00` the next day's 01:00 and
/// `10:61` 11:01, so a time a person mistyped was taken as another they never meant.
public enum RFC3339Fields {
    /// Whether `text` is `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)` with every field in its range:
    /// a day that exists in its month (leap years included), hours 0–23, minutes 0–59, seconds
    /// 0–60 (60 only as RFC 3339 allows, for a leap second).
    public static func areValid(_ text: some StringProtocol) -> Bool {
        let bytes = Array(text.utf8)
        var at = 0
        func number(_ count: Int) -> Int? {
            guard at + count <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[at..<at + count] {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            at += count
            return value
        }
        func take(_ allowed: String) -> Bool {
            guard at < bytes.count, allowed.utf8.contains(bytes[at]) else { return false }
            at += 1
            return true
        }
        guard let year = number(4), take("-"), let month = number(2), take("-"), let day = number(2), take("Tt"),
              let hour = number(2), take(":"), let minute = number(2), take(":"), let second = number(2)
        else { return false }
        guard (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year), hour <= 23, minute <= 59, second <= 60
        else { return false }
        if take(".") {
            let digits = at
            while at < bytes.count, bytes[at] >= UInt8(ascii: "0"), bytes[at] <= UInt8(ascii: "9") { at += 1 }
            guard at > digits else { return false }
        }
        if take("Zz") { return at == bytes.count }
        guard take("+-"), let offsetHours = number(2), take(":"), let offsetMinutes = number(2) else { return false }
        return offsetHours <= 23 && offsetMinutes <= 59 && at == bytes.count
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}
