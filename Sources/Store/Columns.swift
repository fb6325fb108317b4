import Foundation
import ScrollOffCore

/// Conversions between the core's values and column values, each with the inverse that `load()`
/// uses. Kept in one place so every table spells a day, a month or a kind the same way.
enum Columns {
    static func day(_ d: LocalCalendar.Day) -> String { d.description }

    static func day(_ text: String, table: String) throws(StoreError) -> LocalCalendar.Day {
        let parts = text.split(separator: "-")
        guard parts.count == 3, let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]),
              (1...12).contains(m), (1...31).contains(d)
        else { throw .invalidRow(table: table, detail: "“\(text)” is not a day (YYYY-MM-DD)") }
        return LocalCalendar.Day(year: y, month: m, day: d)
    }

    static func month(_ m: LocalCalendar.Month) -> String { m.month < 10 ? "\(m.year)-0\(m.month)" : "\(m.year)-\(m.month)" }

    static func month(_ text: String, table: String) throws(StoreError) -> LocalCalendar.Month {
        let parts = text.split(separator: "-")
        guard parts.count == 2, let y = Int(parts[0]), let m = Int(parts[1]), (1...12).contains(m)
        else { throw .invalidRow(table: table, detail: "“\(text)” is not a month (YYYY-MM)") }
        return LocalCalendar.Month(year: y, month: m)
    }

    static func instant(_ ms: Int64?) -> Instant? { ms.map { Instant(millisecondsSince1970: $0) } }

    /// A set of entries as a sorted JSON array, so equal sets store equal text.
    static func entries(_ set: Set<EntryID>) -> String { JSONCoding.string(set.map(\.rawValue).sorted()) }

    static func entries(_ text: String, table: String) throws(StoreError) -> Set<EntryID> {
        Set(try JSONCoding.decode([String].self, from: text, table: table, column: "entries").map { EntryID($0) })
    }

    static func scheduleKind(_ k: Schedule.Kind) -> (kind: String, strict: Bool) {
        switch k {
        case .block: ("block", false)
        case .curfew: ("curfew", false)
        case .strictCurfew: ("curfew", true)
        }
    }

    static func scheduleKind(_ kind: String, strict: Bool) throws(StoreError) -> Schedule.Kind {
        switch (kind, strict) {
        case ("block", false): return .block
        case ("curfew", false): return .curfew
        case ("curfew", true): return .strictCurfew
        default: throw .invalidRow(table: "schedules", detail: "kind “\(kind)” with strict=\(strict)")
        }
    }

    static func origin(_ o: CreditBatch.Origin) -> (origin: String, day: String?) {
        switch o {
        case .earned(let d): ("earned", day(d))
        case .starter: ("starter", nil)
        case .adjustment: ("adjustment", nil)
        case .allowance(let d): ("allowance", day(d))
        }
    }

    static func origin(_ origin: String, day text: String?) throws(StoreError) -> CreditBatch.Origin {
        switch (origin, text) {
        case ("earned", let text?): return .earned(try day(text, table: "wallet_batches"))
        case ("starter", nil): return .starter
        case ("adjustment", nil): return .adjustment
        case ("allowance", let text?): return .allowance(try day(text, table: "wallet_batches"))
        default: throw .invalidRow(table: "wallet_batches", detail: "origin “\(origin)” with day \(text ?? "none")")
        }
    }
}

extension WalletState.RunningSpend {
    /// ScrollOffCore gives `RunningSpend` no public initializer, so the store builds one through
    /// its `Codable` conformance: a mirror with the same property names and types encodes to
    /// exactly what the synthesized decoder reads. The save → load round-trip test guards it.
    static func make(grantID: Int64, entry: EntryID, settledThrough: Instant, limitEnd: Instant?) throws(StoreError) -> Self {
        struct Mirror: Encodable {
            var grantID: Int64
            var entry: EntryID
            var settledThrough: Instant
            var limitEnd: Instant?
        }
        let text = JSONCoding.string(Mirror(grantID: grantID, entry: entry, settledThrough: settledThrough, limitEnd: limitEnd))
        return try JSONCoding.decode(Self.self, from: text, table: "wallet_state", column: "spend_*")
    }
}
