import ScrollOffCore

/// What the store knows about one fetched list, kept next to the copy as `<name>.json` and shown
/// by `scrolloff lists list`. Written atomically after every refresh attempt.
public struct ListMetadata: Sendable, Equatable, Codable {
    /// At most this many bad lines are kept; `badLineCount` has the full count.
    public static let maxStoredBadLines = 20
    /// Bad line text is cut to this many characters, so a garbage list cannot bloat the file.
    public static let maxBadLineText = 200

    public var formatVersion: Int
    public var name: ListName
    public var url: String
    /// Validators of the copy in force, sent back on the next refresh.
    public var validators: ConditionalValidators
    public var lastAttempt: Instant?
    /// The last refresh that ended with a current copy in force: a validated download or a 304.
    public var lastSuccess: Instant?
    /// When the copy in force was last replaced by a new download.
    public var lastChanged: Instant?
    /// Why the last attempt failed; nil after a success.
    public var lastError: String?
    /// `ListFetchError.code` of the last failure; nil after a success.
    public var lastErrorCode: String?
    public var consecutiveFailures: Int
    /// Size on disk of the copy in force.
    public var sizeBytes: Int64?
    public var entryCount: Int?
    public var badLineCount: Int?
    public var badLines: [ValidationSummary.BadLine]
    /// Names a refresh dropped while a rule held the list (SPEC §3 "Enforcement at every
    /// instant"); they stay in force from `<name>.held` until the lock ends. Nil: none held.
    public var held: HeldNames?
    /// The revision of the household's held names (kept in the state, shared by every helper of
    /// one store) that `<name>.held` was last brought in line with; nil while names this helper's
    /// own refresh held are not the household's yet (and before the first).
    public var heldRevision: Int64?
    /// Who added the source: every refresh reads and connects with their rights. Nil
    /// in a record written before adders were kept, which is read as nobody's (`SourceAdder.unknown`).
    public var addedBy: SourceAdder?

    public init(name: ListName, url: String) {
        formatVersion = 1
        self.name = name
        self.url = url
        validators = ConditionalValidators()
        consecutiveFailures = 0
        badLines = []
    }

    /// Whether a copy was ever accepted (it may still be served after later failures).
    public var hasCopy: Bool { lastChanged != nil }

    /// The inputs of `RefreshPlan`.
    public var history: RefreshHistory {
        RefreshHistory(lastSuccess: lastSuccess, lastAttempt: lastAttempt, consecutiveFailures: consecutiveFailures)
    }

    mutating func recordFailure(_ error: ListFetchError, at instant: Instant) {
        lastAttempt = instant
        lastError = error.description
        lastErrorCode = error.code
        consecutiveFailures += 1
    }

    mutating func recordSuccess(at attempt: Instant, finished: Instant, validators: ConditionalValidators) {
        lastAttempt = attempt
        lastSuccess = finished
        lastError = nil
        lastErrorCode = nil
        consecutiveFailures = 0
        self.validators = validators
    }

    mutating func recordNewCopy(at instant: Instant, sizeBytes: Int64, summary: ValidationSummary) {
        lastChanged = instant
        self.sizeBytes = sizeBytes
        entryCount = summary.entryCount
        badLineCount = summary.badLineCount
        badLines = summary.badLines.prefix(Self.maxStoredBadLines).map { line in
            var line = line
            if line.text.count > Self.maxBadLineText { line.text = String(line.text.prefix(Self.maxBadLineText)) + "…" }
            return line
        }
    }
}

/// Rules a refresh dropped from a list a rule holds (a block's cooldown, a curfew): kept in force
/// next to the new copy until the lock ends, so a shrinking list is no way around a lock.
public struct HeldNames: Sendable, Equatable, Codable {
    /// How many rules `<name>.held` keeps.
    public var count: Int
    /// When the lock that holds them ends, as the rules said at the last refresh; nil when waiting
    /// alone will not open it (asked again at every refresh).
    public var until: Instant?
    /// The rule's words, for `lists list` and the log.
    public var reason: String
    /// When names were first held back under this lock.
    public var since: Instant

    public init(count: Int, until: Instant?, reason: String, since: Instant) {
        self.count = count
        self.until = until
        self.reason = reason
        self.since = since
    }
}
