import ScrollOffCore
import Store

/// The refusals recorded as events, coalesced so a flood of attempts cannot grow the events
/// table without bound (SPEC §12).
///
/// The bound: per profile, at most `rowsPerHour` refusal rows have their first attempt inside any
/// rolling hour. An attempt by the same actor with the same profile, kind, action, rule and subject as a row begun
/// less than `burstWindow` ago is counted in that row (`count`, `lastAt`); an attempt that would
/// need a new row when the hour's rows are used up is counted in the newest row (`folded`). So a
/// script refused 10,000 times in an hour writes at most 20 rows (the count stays exact), at most
/// 480 a day and, with the 90-day retention (SPEC §12), at most 43,200 per profile ever. The
/// window lives in memory: a restart starts new rows, which the restart itself rate-limits.
struct RefusalLog {
    static let burstWindow = Span.minutes(10)
    static let rowsPerHour = 20

    struct Key: Hashable {
        var actor: String
        var kind: EventKind
        var action: String
        var rule: Refusal.Rule
        var subject: String?
    }

    struct Row {
        var id: Int64
        var key: Key
        var first: Instant
        var record: RefusalRecord
    }

    enum Decision: Equatable {
        case insert
        /// Count in row `index` of the profile's recent rows; `folded` when only the hour's cap put it there.
        case count(index: Int, folded: Bool)
    }

    /// Rows begun within the last hour, per profile, oldest first.
    private(set) var recent: [String: [Row]] = [:]

    mutating func decide(_ key: Key, profile: String, at now: Instant) -> Decision {
        var rows = recent[profile] ?? []
        rows.removeAll { now - $0.first >= .hours(1) || $0.first > now }
        recent[profile] = rows
        if let i = rows.lastIndex(where: { $0.key == key && now - $0.first < Self.burstWindow }) { return .count(index: i, folded: false) }
        if rows.count >= Self.rowsPerHour { return .count(index: rows.count - 1, folded: true) }
        return .insert
    }

    mutating func inserted(_ row: Row, profile: String) { recent[profile, default: []].append(row) }

    mutating func update(_ record: RefusalRecord, index: Int, profile: String) { recent[profile]?[index].record = record }

    mutating func forget(profile: String) { recent[profile] = nil }
}
