/// The position of an entry (a curated service or a custom domain) in the rules snapshot's entry
/// table. The matcher only carries these numbers; what they mean belongs to the snapshot.
public struct EntryIndex: Hashable, Comparable, Sendable, ExpressibleByIntegerLiteral, CustomStringConvertible {
    public var rawValue: UInt32
    public init(_ rawValue: UInt32) { self.rawValue = rawValue }
    public init(integerLiteral value: UInt32) { rawValue = value }
    public static func < (a: EntryIndex, b: EntryIndex) -> Bool { a.rawValue < b.rawValue }
    public var description: String { "#\(rawValue)" }
}

/// Names one distinct set of entries in `DomainMatcher.entrySets`. `none` (0) is the empty set.
///
/// Many names share few sets (every Instagram name maps to `{instagram}`), so a lookup answers
/// with one small integer and the snapshot keeps per-set decisions in an array indexed by it.
public struct EntrySetID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// No entry names this domain.
    public static let none = EntrySetID(rawValue: 0)
    public static func < (a: EntrySetID, b: EntrySetID) -> Bool { a.rawValue < b.rawValue }
    public var description: String { "set \(rawValue)" }
}

/// What the matcher knows about one name.
public struct MatchResult: Hashable, Sendable, CustomStringConvertible {
    /// The entries whose lists cover the name, kept even when the name is allowed so that callers
    /// can tell "allowed despite a block" from "not listed".
    public var entrySet: EntrySetID
    /// An allow rule covers the name. Allow beats block (SPEC §1).
    public var isAllowed: Bool

    public init(entrySet: EntrySetID, isAllowed: Bool) {
        self.entrySet = entrySet
        self.isAllowed = isAllowed
    }

    public static let noMatch = MatchResult(entrySet: .none, isAllowed: false)

    /// Some entry lists the name and no allow rule covers it.
    @inlinable public var isBlocked: Bool { !isAllowed && entrySet != .none }

    public var description: String {
        isAllowed ? "allowed (\(entrySet))" : entrySet == .none ? "not listed" : "blocked by \(entrySet)"
    }
}

/// Interns sorted entry sets so that equal sets share one id. Build time only.
struct EntrySetInterner {
    private(set) var sets: [[EntryIndex]] = [[]]
    private var ids: [[EntryIndex]: UInt32] = [[]: 0]
    private var addMemo: [UInt64: UInt32] = [:]
    private var unionMemo: [UInt64: UInt32] = [:]
    /// The last `adding` asked and answered: a list's names mostly make new nodes, so the same
    /// question (entry into the empty set) comes a million times in a row; this skips the hashing.
    private var lastAdd: (key: UInt64, result: UInt32) = (UInt64.max, 0)

    mutating func intern(_ set: [EntryIndex]) -> UInt32 {
        if let id = ids[set] { return id }
        let id = UInt32(sets.count)
        sets.append(set)
        ids[set] = id
        return id
    }

    /// The id of `sets[id] ∪ {entry}`.
    mutating func adding(_ entry: EntryIndex, to id: UInt32) -> UInt32 {
        let key = UInt64(id) << 32 | UInt64(entry.rawValue)
        if key == lastAdd.key { return lastAdd.result }
        if let known = addMemo[key] {
            lastAdd = (key, known)
            return known
        }
        var set = sets[Int(id)]
        if let position = set.firstIndex(where: { $0 >= entry }) {
            if set[position] != entry { set.insert(entry, at: position) }
        } else {
            set.append(entry)
        }
        let result = intern(set)
        addMemo[key] = result
        lastAdd = (key, result)
        return result
    }

    /// The id of `sets[a] ∪ sets[b]`.
    mutating func union(_ a: UInt32, _ b: UInt32) -> UInt32 {
        if a == b || b == 0 { return a }
        if a == 0 { return b }
        let key = UInt64(min(a, b)) << 32 | UInt64(max(a, b))
        if let known = unionMemo[key] { return known }
        let result = intern(Array(Set(sets[Int(a)]).union(sets[Int(b)])).sorted())
        unionMemo[key] = result
        return result
    }
}
