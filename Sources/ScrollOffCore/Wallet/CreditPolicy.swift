/// What the wallet and the bypass ladder need to know about the profile besides their own state:
/// the effective knobs and the profile's time zone. Not persisted; rebuilt from the configuration,
/// so a reload takes effect at the next operation.
public struct CreditPolicy: Sendable {
    public var knobs: Knobs
    /// Days, months and midnights of the profile's IANA zone (SPEC §4, §5).
    public var calendar: LocalCalendar
    /// The owner's daily allowances in force (SPEC §4a): the wallet grants each one's seconds for
    /// the day at local midnight, and when one changes, the difference at once.
    public var allowances: [Allowance]

    public init(knobs: Knobs, calendar: LocalCalendar, allowances: [Allowance] = []) {
        self.knobs = knobs
        self.calendar = calendar
        self.allowances = allowances
    }
}

/// Why a wallet or ladder operation did nothing.
public enum CreditError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A rule said no; the refusal says which and when it opens again (CLI exit code 1).
    case refused(Refusal)
    /// The request itself cannot be carried out as asked (CLI exit code 2); the text says what to change.
    case invalid(String)

    public var description: String {
        switch self {
        case .refused(let r): r.message
        case .invalid(let text): text
        }
    }

    /// The refusal, when this is one.
    public var refusal: Refusal? {
        if case .refused(let r) = self { return r }
        return nil
    }
}

/// Everything an operation produced for the helper to persist and act on.
public struct CreditOutcome: Hashable, Sendable {
    /// New ledger rows, in time order; append them as they are.
    public var rows: [LedgerRow] = []
    /// New events, in time order (SPEC §4 "with an event saying so", §7 insights).
    public var events: [CreditEvent] = []
    /// The grant the operation opened, if it opened one.
    public var grant: Grant?

    public init(rows: [LedgerRow] = [], events: [CreditEvent] = [], grant: Grant? = nil) {
        self.rows = rows
        self.events = events
        self.grant = grant
    }
}
