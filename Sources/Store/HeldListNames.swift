import ScrollOffCore

/// What the household holds of one downloaded list (SPEC §3 "Enforcement at every instant"): the
/// names a refresh dropped while a rule held the list, which stay in force on every helper until
/// the lock ends. This summary is what the state carries (`StoredState.heldLists`), so a reload at
/// every change of another helper reads a few numbers per list, never the names; a helper reads
/// the names (`StateStore.heldListNames`) only when `revision` differs from the one its own copy
/// of them (`<name>.held`) was written from.
///
/// Rows are kept when the names are let go (`count` 0, a new `revision`), so a revision never
/// comes back for another set of names of the same list; `lists rm` deletes the row with the list.
public struct HeldListSummary: Hashable, Sendable {
    public var name: String
    /// How many rules are held; 0 once the lock ended and they were let go.
    public var count: Int
    /// Changes with every change of the held names (never with `until` or `reason` alone).
    public var revision: Int64
    /// When the lock that holds them ends, as the rules said at the last change; nil when waiting
    /// alone will not open it.
    public var until: Instant?
    /// The rule's words, for `lists list` and the log.
    public var reason: String
    /// When names were first held under this lock.
    public var since: Instant

    public init(name: String, count: Int, revision: Int64, until: Instant?, reason: String, since: Instant) {
        self.name = name
        self.count = count
        self.revision = revision
        self.until = until
        self.reason = reason
        self.since = since
    }
}

/// A list's held names with their summary: the rule lines as the list store writes them (one rule
/// a line, in the list format its parser reads back), sorted, each once.
public struct HeldListNames: Hashable, Sendable {
    public var summary: HeldListSummary
    public var rules: [String]

    public init(summary: HeldListSummary, rules: [String]) {
        self.summary = summary
        self.rules = rules
    }

    /// The `rules` column: the lines joined by newlines.
    package var rulesText: String { rules.joined(separator: "\n") }

    /// The lines of a `rules` column; an empty column holds none.
    package static func rules(ofText text: String) -> [String] {
        text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
    }
}

extension EventKind {
    /// SPEC §3: a refresh dropped names of a list a rule holds; they stay blocked on every helper.
    public static let listNamesHeld: EventKind = "listNamesHeld"
    /// SPEC §3: the lock ended and the names a refresh dropped were let go.
    public static let listNamesReleased: EventKind = "listNamesReleased"
}

extension SharedColumns {
    /// A `held_list_names` row as read by either backend; a negative count is refused by name.
    package static func heldListSummary(name: String, count: Int64, revision: Int64, until: Int64?, reason: String,
                                        since: Int64) throws(StoreError) -> HeldListSummary {
        guard let count = Int(exactly: count), count >= 0 else {
            throw .invalidRow(table: "held_list_names", detail: "name_count \(count) of list \(name) is not a count")
        }
        return HeldListSummary(name: name, count: count, revision: revision, until: until.map { Instant(millisecondsSince1970: $0) },
                               reason: reason, since: Instant(millisecondsSince1970: since))
    }
}
