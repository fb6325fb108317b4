/// An owner's daily allowance (SPEC §4a): time a profile may spend on some entries (or on any)
/// each local day without earning it. The wallet grants it at local midnight as a batch that only
/// those entries may draw on, spends it before earned credit, and takes back what is left at the
/// next midnight: it never rolls over. Each grant, change and reset is an `allowance` ledger row.
public struct Allowance: Hashable, Sendable, Codable {
    /// The entries it is for, sorted; empty = every entry of the profile.
    public var entries: [EntryID]
    /// Seconds per weekday, index 0 = Sunday … 6 = Saturday (the SPEC §2 bitmask's order); 0 = none that day.
    public var secondsByWeekday: [Int64]
    /// A lowering starts a cooldown like any tightening (SPEC §3): raising it again waits for it.
    public var cooldownUntil: Instant?

    public init(entries: [EntryID], secondsByWeekday: [Int64], cooldownUntil: Instant? = nil) {
        self.entries = Array(Set(entries)).sorted()
        var days = Array(secondsByWeekday.prefix(7))
        while days.count < 7 { days.append(0) }
        self.secondsByWeekday = days.map { max(0, $0) }
        self.cooldownUntil = cooldownUntil
    }

    /// The longest daily allowance: a whole day.
    public static let longest: Span = .hours(24)

    /// The most entries one allowance names: far past what a household writes (a category such
    /// as `social` covers many), so a forged request is refused before its words are resolved.
    /// The control API, the page and the configuration file all refuse past it.
    public static let mostEntries = 32

    /// What names it in the wallet and the store: the entries joined by commas, `*` for every entry.
    public var key: String { Self.key(for: entries) }

    public static func key(for entries: [EntryID]) -> String {
        entries.isEmpty ? "*" : Array(Set(entries)).sorted().map(\.rawValue).joined(separator: ",")
    }

    /// The entries a batch with this key may be spent on; empty = every entry.
    public static func entries(ofKey key: String) -> [EntryID] {
        key == "*" ? [] : key.split(separator: ",").map { EntryID(String($0)) }
    }

    /// Whether a spend on `entry` may draw on it.
    public func covers(_ entry: EntryID?) -> Bool { Self.covers(key: key, entry) }

    static func covers(key: String, _ entry: EntryID?) -> Bool {
        if key == "*" { return true }
        guard let entry else { return false }
        return key.split(separator: ",").contains { $0 == entry.rawValue }
    }

    /// Seconds allowed on weekday `weekday` (1 = Sunday … 7 = Saturday, as `LocalCalendar.weekday`).
    public func seconds(onWeekday weekday: Int) -> Int64 {
        let i = ((weekday - 1) % 7 + 7) % 7
        return secondsByWeekday[i]
    }

    /// This allowance with `seconds` on each of `days` and the other days as they were.
    public func setting(_ seconds: Int64, on days: Weekdays) -> Allowance {
        var copy = self
        for n in 0..<7 where days.contains(.day(number: n)) { copy.secondsByWeekday[n] = max(0, seconds) }
        return copy
    }

    /// Whether it allows nothing on any day (then it is removed rather than kept).
    public var isEmpty: Bool { secondsByWeekday.allSatisfy { $0 == 0 } }

    /// Whether `new` allows more than `self` on some weekday: a loosening, which cooldowns and
    /// locks refuse (SPEC §3, §4a).
    public func isLoosened(by new: Allowance) -> Bool {
        zip(secondsByWeekday, new.secondsByWeekday).contains { $1 > $0 }
    }

    /// Whether `new` allows less than `self` on some weekday: a tightening, which starts a cooldown.
    public func isTightened(by new: Allowance) -> Bool {
        zip(secondsByWeekday, new.secondsByWeekday).contains { $1 < $0 }
    }

    /// "1 h on weekdays, 2 h at weekends" in words, for `allowance list`, events and the page.
    public var words: String {
        var groups: [(Int64, Weekdays)] = []
        for n in [1, 2, 3, 4, 5, 6, 0] where secondsByWeekday[n] > 0 {
            let s = secondsByWeekday[n]
            if let i = groups.firstIndex(where: { $0.0 == s }) { groups[i].1.insert(.day(number: n)) } else { groups.append((s, .day(number: n))) }
        }
        let days = groups.map { "\(SpanWords.describe(seconds: $0.0)) \(Self.dayWords($0.1))" }
        let what = entries.isEmpty ? "any entry" : entries.map(\.rawValue).joined(separator: ", ")
        return "\(days.isEmpty ? "nothing" : days.joined(separator: ", ")) for \(what)"
    }

    static func dayWords(_ d: Weekdays) -> String {
        switch d {
        case .daily: "every day"
        case .weekdays: "on weekdays"
        case .weekends: "at weekends"
        default: "on \(d.description)"
        }
    }
}
