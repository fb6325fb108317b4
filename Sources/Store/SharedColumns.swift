import ScrollOffCore

/// The column conventions of `Columns`, `JSONCoding` and the stored forms of events, for another
/// backend of `StateStore` (PostgresStore) that keeps the same columns: one spelling of a day, a
/// kind or a JSON list for both, so rows copy across unchanged (`scrolloff-dns store copy`).
package enum SharedColumns {
    package static func day(_ d: LocalCalendar.Day) -> String { Columns.day(d) }
    package static func day(_ text: String, table: String) throws(StoreError) -> LocalCalendar.Day { try Columns.day(text, table: table) }
    package static func month(_ m: LocalCalendar.Month) -> String { Columns.month(m) }
    package static func month(_ text: String, table: String) throws(StoreError) -> LocalCalendar.Month { try Columns.month(text, table: table) }
    package static func entries(_ set: Set<EntryID>) -> String { Columns.entries(set) }
    package static func entries(_ text: String, table: String) throws(StoreError) -> Set<EntryID> { try Columns.entries(text, table: table) }
    package static func scheduleKind(_ k: Schedule.Kind) -> (kind: String, strict: Bool) { Columns.scheduleKind(k) }
    package static func scheduleKind(_ kind: String, strict: Bool) throws(StoreError) -> Schedule.Kind { try Columns.scheduleKind(kind, strict: strict) }
    package static func origin(_ o: CreditBatch.Origin) -> (origin: String, day: String?) { Columns.origin(o) }
    package static func origin(_ origin: String, day: String?) throws(StoreError) -> CreditBatch.Origin { try Columns.origin(origin, day: day) }
    package static func json<T: Encodable>(_ value: T) -> String { JSONCoding.string(value) }
    package static func decode<T: Decodable>(_ type: T.Type, from text: String, table: String, column: String) throws(StoreError) -> T {
        try JSONCoding.decode(type, from: text, table: table, column: column)
    }
    package static func runningSpend(grantID: Int64, entry: EntryID, settledThrough: Instant, limitEnd: Instant?) throws(StoreError) -> WalletState.RunningSpend {
        try .make(grantID: grantID, entry: entry, settledThrough: settledThrough, limitEnd: limitEnd)
    }
    package static func csvLine(_ fields: [String]) -> String { CSV.line(fields) }
    package static func add(_ other: DailyTotals, to totals: inout DailyTotals) { totals.add(other) }
    /// SPEC §7: an urge is resisted when no grant for its entry follows within this.
    package static var resistWindow: Span { Store.resistWindowShared }
}

extension Store {
    static var resistWindowShared: Span { resistWindow }
}

/// Values whose memberwise initializers are internal to this module, for another backend.
extension SharedColumns {
    package static func storedProfile(settings: ProfileSettings, entries: [StoredEntry], blocks: [Block], schedules: [Schedule],
                                      focusSessions: [FocusSession], openGrants: [Grant], account: CreditAccountState?) -> StoredProfile {
        StoredProfile(settings: settings, entries: entries, blocks: blocks, schedules: schedules, focusSessions: focusSessions,
                      openGrants: openGrants, account: account)
    }

    package static func storedState(anchor: ClockAnchor?, profiles: [StoredProfile], plans: [Plan], alternatives: [Alternative],
                                    timeRequests: [TimeRequest], settings: [String: String], listSources: [ListSource] = [],
                                    heldLists: [HeldListSummary] = []) -> StoredState {
        StoredState(anchor: anchor, profiles: profiles, plans: plans, alternatives: alternatives, timeRequests: timeRequests, settings: settings,
                    listSources: listSources, heldLists: heldLists)
    }

    /// A `household_lists` row as read by either backend. Every helper of the household acts on
    /// these rows (names become file names in its lists folder, URLs are fetched and shown in
    /// `lists list`), and a row may have been written by another helper's build or by hand, so what
    /// no `lists add` could have written is refused by name: a name that is not a list name, a URL
    /// longer than the control API takes or carrying a control character (terminal escapes in
    /// `lists list`), an added_on no helper could be named, ids outside a uid's range. The load
    /// fails whole, so the rules in force stay.
    package static func listSource(name: String, url: String, uid: Int64?, gid: Int64?, added: Int64, on node: String) throws(StoreError) -> ListSource {
        // ListName's rule (ListFetch, which this module does not see): 1 to 64 of a-z 0-9 . - _, a letter or digit first.
        let alphanumeric = { (b: UInt8) in (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(b) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b) }
        guard (1...64).contains(name.utf8.count), let first = name.utf8.first, alphanumeric(first),
              name.utf8.allSatisfy({ alphanumeric($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") })
        else {
            throw .invalidRow(table: "household_lists",
                              detail: "\(String(reflecting: String(name.prefix(64)))) is not a list name (1 to 64 of a-z, 0-9, '.', '-', '_')")
        }
        // The control API's bound on a URL (`WireText.longestOther`), which every `lists add` passed.
        guard url.utf8.count <= 2048 else {
            throw .invalidRow(table: "household_lists", detail: "the url of list \(name) is \(url.utf8.count) bytes, more than 2048")
        }
        if let control = url.unicodeScalars.first(where: { $0.properties.generalCategory == .control }) {
            throw .invalidRow(table: "household_lists",
                              detail: "the url of list \(name) carries the control character U+\(String(control.value, radix: 16, uppercase: true))")
        }
        // The helper it was added through is named in other helpers' `lists list` and `doctor`.
        guard node.utf8.count <= 255, !node.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw .invalidRow(table: "household_lists", detail: "added_on of list \(name) is not a helper's name (at most 255 bytes, no control characters)")
        }
        func id(_ value: Int64?, _ column: String) throws(StoreError) -> UInt32? {
            guard let value else { return nil }
            guard let id = UInt32(exactly: value) else { throw .invalidRow(table: "household_lists", detail: "\(column) \(value) of list \(name) is not a user or group id") }
            return id
        }
        return ListSource(name: name, url: url, addedByUID: try id(uid, "added_by_uid"), addedByGID: try id(gid, "added_by_gid"),
                          added: Instant(millisecondsSince1970: added), addedOn: node)
    }

    package static func ledgerBalance(profile: String, balance: Int64, ledgerSum: Int64, lowest: Int64) -> LedgerBalance {
        LedgerBalance(profile: profile, balanceSeconds: balance, ledgerSumSeconds: ledgerSum, lowestRunningSeconds: lowest)
    }

    package static func integrityReport(problems: [String]) -> IntegrityReport { IntegrityReport(problems: problems) }
    package static var noRetention: RetentionReport { RetentionReport() }
}

extension SharedColumns {
    /// An empty receipt for another backend's commit to fill.
    package static var emptyReceipt: CommitReceipt { CommitReceipt() }
}
