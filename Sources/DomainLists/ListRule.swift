#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Which names a rule covers, relative to the name it was written with.
public enum MatchScope: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    /// The name and every name under it: `example.com`, `0.0.0.0 example.com`, `||example.com^`.
    /// SPEC §1: blocking a domain blocks all its subdomains.
    case nameAndSubdomains = 0
    /// Only the name itself: `|example.com^` (the adblock start anchor `|` pins the hostname start,
    /// `^` its end, so no subdomain matches; AdGuard Home reads it the same way).
    case exactName = 1
    /// Only names under it, never the name itself: `*.example.com`, `||*.example.com^`.
    case subdomainsOnly = 2

    public var description: String {
        switch self {
        case .nameAndSubdomains: "name and subdomains"
        case .exactName: "exact name"
        case .subdomainsOnly: "subdomains only"
        }
    }
}

/// Whether a rule blocks names or keeps them open. Allow always beats block (SPEC §1).
public enum RuleAction: UInt8, Sendable, CustomStringConvertible {
    case block = 0
    case allow = 1
    public var description: String { self == .block ? "block" : "allow" }
}

/// One rule read from a list.
public struct ListRule: Hashable, Sendable, CustomStringConvertible {
    public var name: DomainName
    public var scope: MatchScope
    public var action: RuleAction

    public init(name: DomainName, scope: MatchScope = .nameAndSubdomains, action: RuleAction = .block) {
        self.name = name
        self.scope = scope
        self.action = action
    }

    public var description: String { "\(action) \(name) (\(scope))" }
}

/// The rules of a list, packed into one byte buffer so a million rules cost a few arrays rather
/// than a million strings. Reading an element builds a `ListRule`; the matcher reads the bytes.
///
/// A value type: copies share one `PackedRules` until one of them is changed, which first takes a
/// storage of its own (copy on write), so no copy ever sees another's change. The storage hands
/// its pages back to the kernel in steps when the last copy goes (`PagedBuffer`, SPEC §9.10).
public struct RuleList: RandomAccessCollection, Sendable, Equatable {
    private var storage: PackedRules

    public init() { storage = PackedRules.empty }

    public init(_ rules: some Sequence<ListRule>) {
        self.init()
        for rule in rules { append(rule) }
    }

    /// The storage, made this list's own first if another copy shares it.
    @inline(__always)
    private mutating func unique() -> PackedRules {
        if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
        return storage
    }

    private var bytes: UnsafeBufferPointer<UInt8> { storage.bytes.values }
    private var ends: UnsafeBufferPointer<UInt32> { storage.ends.values }
    private var kinds: UnsafeBufferPointer<UInt8> { storage.kinds.values }

    public var startIndex: Int { 0 }
    public var endIndex: Int { storage.ends.count }

    public subscript(position: Int) -> ListRule {
        let text = withName(at: position) { String(decoding: $0, as: UTF8.self) }
        let kind = kinds[position]
        return ListRule(
            name: DomainName(normalizedText: text),
            scope: MatchScope(rawValue: kind & 0x0F) ?? .nameAndSubdomains,
            action: RuleAction(rawValue: kind >> 4) ?? .block
        )
    }

    public func scope(at position: Int) -> MatchScope { Self.scope(ofKind: kinds[position]) }
    public func action(at position: Int) -> RuleAction { Self.action(ofKind: kinds[position]) }

    static func scope(ofKind kind: UInt8) -> MatchScope { MatchScope(rawValue: kind & 0x0F) ?? .nameAndSubdomains }
    static func action(ofKind kind: UInt8) -> RuleAction { RuleAction(rawValue: kind >> 4) ?? .block }

    /// The object that owns the packed storage, the same for copies that share it: for a caller
    /// that hands the last reference to another thread to be freed there (the helper's
    /// `Retirement`). Holding it keeps the storage alive; it offers nothing to read or write.
    public var storageOwner: AnyObject { storage }

    /// Bytes of all the names together.
    var nameByteCount: Int { storage.bytes.count }

    /// Rules the parser read but did not store because each repeated the rule just before it
    /// (same name, scope and action): one name written three million times (a list that compresses
    /// to almost nothing, under the download cap) is one rule in memory, not 80 MiB of copies
    /// (SPEC §9.6: a list costs memory for what it holds). A repeat adds nothing to what a list blocks or allows.
    public var repeatsLeftOut: Int { storage.repeats }

    /// The rules as the list's lines gave them, repeats included: the count people are told
    /// ("N rules from M lines"), which leaving the repeats out of memory does not change.
    public var countWithRepeats: Int { count + storage.repeats }

    /// Whether this list holds its storage alone, no other copy sharing it: only then may a reader
    /// that consumes it hand its pages back as it goes (`MatcherBuilder.add(taking:entry:)`).
    mutating func holdsStorageAlone() -> Bool { isKnownUniquelyReferenced(&storage) }

    /// Whether the last rule stored is `name` with `kind` (the name's bytes compared).
    private func lastRuleIs(_ name: UnsafeBufferPointer<UInt8>, kind: UInt8) -> Bool {
        let last = count - 1
        guard last >= 0, kinds[last] == kind else { return false }
        let range = span(last)
        guard range.count == name.count, let from = name.baseAddress else { return false }
        return memcmp(bytes.baseAddress! + range.lowerBound, from, range.count) == 0
    }

    /// Same rules in the same order: the packed bytes compared.
    public static func == (lhs: RuleList, rhs: RuleList) -> Bool {
        if lhs.storage === rhs.storage { return true }
        return lhs.bytes.elementsEqual(rhs.bytes) && lhs.ends.elementsEqual(rhs.ends) && lhs.kinds.elementsEqual(rhs.kinds)
    }

    /// The packed storage itself, for a reader that walks every rule (`MatcherBuilder`): the
    /// names end to end, each name's end offset, each rule's kind (scope | action << 4).
    func withPackedStorage<R>(
        _ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt32>, UnsafeBufferPointer<UInt8>) throws -> R
    ) rethrows -> R {
        try withExtendedLifetime(storage) { try body(bytes, ends, kinds) }
    }

    /// The normalized name bytes of one rule, without copying.
    public func withName<R>(at position: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        let range = span(position)
        return try withExtendedLifetime(storage) { try body(UnsafeBufferPointer(rebasing: bytes[range])) }
    }

    public mutating func append(_ rule: ListRule) {
        append(normalizedName: Array(rule.name.text.utf8), scope: rule.scope, action: rule.action)
    }

    /// Appends a name that has already been through `DomainNormalizer`. With `droppingRepeat` (the
    /// parser), a rule equal to the one just before it is counted (`repeatsLeftOut`), not stored.
    mutating func append(normalizedName: [UInt8], scope: MatchScope, action: RuleAction, droppingRepeat: Bool = false) {
        let storage = unique()
        if droppingRepeat, normalizedName.withUnsafeBufferPointer({ lastRuleIs($0, kind: scope.rawValue | action.rawValue << 4) }) {
            storage.repeats += 1
            return
        }
        normalizedName.withUnsafeBufferPointer { storage.bytes.append(contentsOf: $0) }
        storage.ends.append(UInt32(storage.bytes.count))
        storage.kinds.append(scope.rawValue | action.rawValue << 4)
    }

    /// Appends `token` as a block rule on the name and its subdomains if it is a name the full
    /// normalization would take unchanged apart from ASCII case: labels of 1…63 bytes of letters,
    /// digits, `-` and `_`, at least two of them, at most 253 bytes, no `xn--` label, a last label
    /// that is not all digits, and not `localhost.localdomain`. Anything else (a trailing dot,
    /// non-ASCII, an A-label to check, a name to reject or set aside) returns false with nothing
    /// appended, and the caller takes the full path (`LineClassifier.addName`), which decides the
    /// same for what this takes (measured: one pass over the bytes, written where they are kept,
    /// instead of copy, lowercase, validate, look up, copy again).
    mutating func appendIfSimpleName(_ token: UnsafeBufferPointer<UInt8>) -> Bool {
        let count = token.count
        guard count > 0, count <= DomainNormalizer.maxNameLength else { return false }
        let storage = unique()
        let start = storage.bytes.count
        storage.bytes.append(contentsOf: token)
        let name = UnsafeMutableBufferPointer(start: storage.bytes.base! + start, count: count)
        let simple = Self.lowercaseIfSimple(name)
        guard simple else {
            storage.bytes.truncate(to: start)
            return false
        }
        // A repeat of the rule just before it is counted, not stored (`repeatsLeftOut`).
        if lastRuleIs(UnsafeBufferPointer(name), kind: MatchScope.nameAndSubdomains.rawValue | RuleAction.block.rawValue << 4) {
            storage.bytes.truncate(to: start)
            storage.repeats += 1
            return true
        }
        storage.ends.append(UInt32(storage.bytes.count))
        storage.kinds.append(MatchScope.nameAndSubdomains.rawValue | RuleAction.block.rawValue << 4)
        return true
    }

    /// Lowercases `name` in place and says whether it is simple (`appendIfSimpleName`).
    private static func lowercaseIfSimple(_ name: UnsafeMutableBufferPointer<UInt8>) -> Bool {
        var labelStart = 0
        var dots = 0
        var allDigits = true
        for index in 0...name.count {
            let byte = index < name.count ? name[index] : UInt8(ascii: ".")
            if byte == UInt8(ascii: ".") {
                let length = index - labelStart
                guard length > 0, length <= DomainNormalizer.maxLabelLength else { return false }
                if length >= 4, name[labelStart] == UInt8(ascii: "x"), name[labelStart + 1] == UInt8(ascii: "n"),
                   name[labelStart + 2] == UInt8(ascii: "-"), name[labelStart + 3] == UInt8(ascii: "-") {
                    return false
                }
                if index < name.count {
                    dots += 1
                    allDigits = true
                }
                labelStart = index + 1
                continue
            }
            let lower = DomainNormalizer.lowercased(byte)
            switch lower {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                break
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                allDigits = false
                name[index] = lower
            default:
                return false
            }
        }
        guard dots > 0, !allDigits else { return false }
        if name.count == localDomainName.count {
            return !UnsafeBufferPointer(name).elementsEqual(localDomainName)
        }
        return true
    }

    /// The one name with a dot that hosts files give the machine itself (`LineClassifier.localNames`).
    private static let localDomainName = Array("localhost.localdomain".utf8)

    /// Room for `nameBytes` bytes of names and `rules` rules, so the storage is not copied as it grows.
    mutating func reserveCapacity(nameBytes: Int, rules: Int) {
        let storage = unique()
        storage.bytes.reserve(nameBytes)
        storage.ends.reserve(rules)
        storage.kinds.reserve(rules)
    }

    /// Appends every rule of `other`, copying its packed bytes (no `ListRule` per rule).
    public mutating func append(contentsOf other: RuleList) {
        // `other` may be this list itself: its storage is kept alive, and read, through `source`.
        let source = other.storage
        let storage = unique()
        let base = UInt32(storage.bytes.count)
        let (bytes, ends, kinds, rules) = (source.bytes.values, source.ends.values, source.kinds.values, source.ends.count)
        storage.bytes.append(contentsOf: bytes)
        storage.ends.reserveMore(rules)
        for end in ends { storage.ends.append(end + base) }
        storage.kinds.append(contentsOf: kinds)
        storage.repeats += source.repeats
        withExtendedLifetime(source) {}
    }

    /// Bytes held by the packed storage, for reports.
    public var storageBytes: Int { storage.bytes.capacity + storage.ends.capacity * 4 + storage.kinds.capacity }

    /// The rules of this list that `other` lacks (same name, scope and action), each once, in this
    /// list's order. Compared on the packed bytes through one open-addressing table over `other`,
    /// so a refresh of a million-name list that a rule holds (SPEC §3) finds its dropped names
    /// without a `String` or a `Set<ListRule>` per rule.
    public func subtracting(_ other: RuleList) -> RuleList {
        var present = RuleTable(capacityFor: other.count)
        // A held list's refresh compares a million names each way: both loops yield on the way (SPEC §9.10).
        for index in other.indices {
            if index & 1023 == 0 { CooperativeYield.point() }
            present.insert(index, of: other)
        }
        var result = RuleList()
        // Rules already taken into the result are added to a second table, so repeats stay out.
        var taken = RuleTable(capacityFor: 16)
        for index in indices {
            if index & 1023 == 0 { CooperativeYield.point() }
            guard !present.contains(index, of: self, in: other) else { continue }
            if taken.contains(index, of: self, in: result) { continue }
            let storage = result.unique()
            storage.bytes.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[span(index)]))
            storage.ends.append(UInt32(storage.bytes.count))
            storage.kinds.append(kinds[index])
            taken.insert(result.count - 1, of: result)
        }
        return withExtendedLifetime((self, other)) { result }
    }

    fileprivate func span(_ index: Int) -> Range<Int> { (index == 0 ? 0 : Int(ends[index - 1]))..<Int(ends[index]) }

    fileprivate func hash(_ index: Int) -> UInt64 {
        // The matcher's word-at-a-time hash over the name (names here are already lowercase, so
        // its case folding changes nothing), with the kind mixed in.
        let range = span(index)
        let name = range.isEmpty ? SuffixHash.root : withExtendedLifetime(storage) {
            SuffixHash.extend(SuffixHash.root, label: bytes.baseAddress! + range.lowerBound, count: range.count)
        }
        return name ^ ((UInt64(kinds[index]) &+ 1) &* 0x9E37_79B9_7F4A_7C15)
    }

    fileprivate func same(_ index: Int, as otherIndex: Int, in other: RuleList) -> Bool {
        let mine = span(index), theirs = other.span(otherIndex)
        guard kinds[index] == other.kinds[otherIndex], mine.count == theirs.count else { return false }
        if mine.isEmpty { return true }
        return withExtendedLifetime((storage, other.storage)) {
            memcmp(bytes.baseAddress! + mine.lowerBound, other.bytes.baseAddress! + theirs.lowerBound, mine.count) == 0
        }
    }
}

/// Rule positions of one `RuleList` by hash, for `RuleList.subtracting`. Grows at half full.
/// Each slot keeps the top 32 bits of its rule's hash beside the position, so a probe compares
/// names only when those agree (measured: comparing at every probe read the other list's storage
/// at random, a miss each, and made the held-names difference of a refresh as slow as a parse).
/// The slots are a `PagedBuffer`: 16 MiB for a 1,000,000-name list, handed back in steps.
private struct RuleTable: ~Copyable {
    /// Hash high 32 bits << 32 | position + 1 in the list the table is over; 0 is empty.
    private var slots: PagedBuffer<UInt64>
    private var used = 0

    init(capacityFor count: Int) {
        var capacity = 16
        while capacity < count * 2 { capacity <<= 1 }
        slots = PagedBuffer(zeroed: capacity)
    }

    mutating func insert(_ index: Int, of list: RuleList) {
        insert(index, hash: list.hash(index), of: list)
    }

    private mutating func insert(_ index: Int, hash: UInt64, of list: RuleList) {
        if (used + 1) * 2 > slots.count { grow(list) }
        let mask = slots.count - 1
        let tag = hash & 0xFFFF_FFFF_0000_0000
        var slot = Int(truncatingIfNeeded: hash) & mask
        while slots[slot] != 0 {
            if slots[slot] & 0xFFFF_FFFF_0000_0000 == tag,
               list.same(Int(slots[slot] & 0xFFFF_FFFF) - 1, as: index, in: list) { return }
            slot = (slot &+ 1) & mask
        }
        slots[slot] = tag | UInt64(index + 1)
        used += 1
    }

    /// Whether `list`'s rule at `index` is in the table over `tableList`.
    func contains(_ index: Int, of list: RuleList, in tableList: RuleList) -> Bool {
        let hash = list.hash(index)
        let mask = slots.count - 1
        let tag = hash & 0xFFFF_FFFF_0000_0000
        var slot = Int(truncatingIfNeeded: hash) & mask
        while slots[slot] != 0 {
            if slots[slot] & 0xFFFF_FFFF_0000_0000 == tag,
               list.same(index, as: Int(slots[slot] & 0xFFFF_FFFF) - 1, in: tableList) { return true }
            slot = (slot &+ 1) & mask
        }
        return false
    }

    private mutating func grow(_ list: RuleList) {
        var old = PagedBuffer<UInt64>(zeroed: slots.count * 2)
        swap(&old, &slots)
        used = 0
        for (index, value) in old.values.enumerated() {
            if index & 1023 == 0 { CooperativeYield.point() }
            guard value != 0 else { continue }
            insert(Int(value & 0xFFFF_FFFF) - 1, hash: list.hash(Int(value & 0xFFFF_FFFF) - 1), of: list)
        }
    }
}

/// `RuleList`'s storage: the names end to end, each name's end offset, each rule's kind
/// (scope | action << 4). Shared by copies of a list and written only through a list that holds
/// the one reference (`RuleList.unique`); its buffers hand their pages back in steps when the last
/// copy goes.
final class PackedRules: @unchecked Sendable {
    // @unchecked: written only while uniquely referenced, by the one list that holds it.
    @exclusivity(unchecked) var bytes = PagedBuffer<UInt8>()
    @exclusivity(unchecked) var ends = PagedBuffer<UInt32>()
    @exclusivity(unchecked) var kinds = PagedBuffer<UInt8>()
    /// Rules read but not stored, each a repeat of the one before it (`RuleList.repeatsLeftOut`).
    @exclusivity(unchecked) var repeats = 0

    /// The storage of every empty list until it is written (never written itself: its static
    /// reference means no list holds it uniquely).
    static let empty = PackedRules()

    /// A storage of its own with the same rules.
    func copy() -> PackedRules {
        let other = PackedRules()
        other.bytes = bytes.copy()
        other.ends = ends.copy()
        other.kinds = kinds.copy()
        other.repeats = repeats
        return other
    }
}
