/// Something that opens an entry for a while (SPEC §4, §5). Grants are what the wallet and the
/// bypass ladder produce and what the entry-state rules consume.
public struct Grant: Hashable, Sendable, Codable {
    public enum Kind: String, Hashable, Sendable, Codable, CaseIterable {
        /// Credit spent with `scrolloff use`; deducted per second while it runs.
        case spend
        /// A 60-second peek, free or paid (SPEC §5 steps 1–2).
        case peek
        /// An emergency token: 10 minutes (SPEC §5 step 4).
        case token
    }

    public var id: Int64
    public var entry: EntryID
    public var kind: Kind
    public var start: Instant
    /// When the grant closes by itself. For a spend this is when the funds available at `start` run out
    /// (or `--for`, whichever is first); `stop` moves it earlier.
    public var end: Instant
    /// The task the person stated (`--task "reply to Sam"`), shown while the grant runs.
    public var task: String?

    public init(id: Int64, entry: EntryID, kind: Kind, start: Instant, end: Instant, task: String? = nil) {
        self.id = id
        self.entry = entry
        self.kind = kind
        self.start = start
        self.end = end
        self.task = task
    }

    @inlinable public func isActive(at t: Instant) -> Bool { start <= t && t < end }
}
