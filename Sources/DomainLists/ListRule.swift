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
public struct RuleList: RandomAccessCollection, Sendable, Equatable {
    private var bytes: [UInt8] = []
    private var ends: [UInt32] = []
    private var kinds: [UInt8] = []

    public init() {}

    public init(_ rules: some Sequence<ListRule>) {
        for rule in rules { append(rule) }
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { ends.count }

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

    /// Bytes of all the names together.
    var nameByteCount: Int { bytes.count }

    /// The packed storage itself, for a reader that walks every rule (`MatcherBuilder`): the
    /// names end to end, each name's end offset, each rule's kind (scope | action << 4).
    func withPackedStorage<R>(
        _ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt32>, UnsafeBufferPointer<UInt8>) throws -> R
    ) rethrows -> R {
        try bytes.withUnsafeBufferPointer { bytes in
            try ends.withUnsafeBufferPointer { ends in
                try kinds.withUnsafeBufferPointer { kinds in try body(bytes, ends, kinds) }
            }
        }
    }

    /// The normalized name bytes of one rule, without copying.
    public func withName<R>(at position: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        let start = position == 0 ? 0 : Int(ends[position - 1])
        let end = Int(ends[position])
        return try bytes.withUnsafeBufferPointer { try body(UnsafeBufferPointer(rebasing: $0[start..<end])) }
    }

    public mutating func append(_ rule: ListRule) {
        append(normalizedName: Array(rule.name.text.utf8), scope: rule.scope, action: rule.action)
    }

    /// Appends a name that has already been through `DomainNormalizer`.
    mutating func append(normalizedName: [UInt8], scope: MatchScope, action: RuleAction) {
        bytes.append(contentsOf: normalizedName)
        ends.append(UInt32(bytes.count))
        kinds.append(scope.rawValue | action.rawValue << 4)
    }

    /// Appends `token` as a block rule on the name and its subdomains if it is a name the full
    /// normalization would take unchanged apart from ASCII case: labels of 1…63 bytes of letters,
    /// digits, `-` and `_`, at least two of them, at most 253 bytes, no `xn--` label, a last label
    /// that is not all digits, and not `localhost.localdomain`. Anything else (a trailing dot,
    /// non-ASCII, an A-label to check, a name to reject or set aside) returns false with nothing
    /// appended, and the caller takes the full path (`LineClassifier.addName`), which decides the
    /// same for what this takes (issue 15: one pass over the bytes, written where they are kept,
    /// instead of copy, lowercase, validate, look up, copy again).
    mutating func appendIfSimpleName(_ token: UnsafeBufferPointer<UInt8>) -> Bool {
        let count = token.count
        guard count > 0, count <= DomainNormalizer.maxNameLength else { return false }
        let start = bytes.count
        bytes.append(contentsOf: token)
        let simple = bytes.withUnsafeMutableBufferPointer { name -> Bool in
            var labelStart = start
            var dots = 0
            var allDigits = true
            for index in start...name.count {
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
            if count == Self.localDomainName.count {
                return !UnsafeBufferPointer(rebasing: name[start...]).elementsEqual(Self.localDomainName)
            }
            return true
        }
        guard simple else {
            bytes.removeSubrange(start...)
            return false
        }
        ends.append(UInt32(bytes.count))
        kinds.append(MatchScope.nameAndSubdomains.rawValue | RuleAction.block.rawValue << 4)
        return true
    }

    /// The one name with a dot that hosts files give the machine itself (`LineClassifier.localNames`).
    private static let localDomainName = Array("localhost.localdomain".utf8)

    /// Room for `nameBytes` bytes of names and `rules` rules, so the storage is not copied as it grows.
    mutating func reserveCapacity(nameBytes: Int, rules: Int) {
        bytes.reserveCapacity(nameBytes)
        ends.reserveCapacity(rules)
        kinds.reserveCapacity(rules)
    }

    /// Appends every rule of `other`, copying its packed bytes (no `ListRule` per rule).
    public mutating func append(contentsOf other: RuleList) {
        let base = UInt32(bytes.count)
        bytes.append(contentsOf: other.bytes)
        ends.append(contentsOf: other.ends.lazy.map { $0 + base })
        kinds.append(contentsOf: other.kinds)
    }

    /// Bytes held by the packed storage, for reports.
    public var storageBytes: Int { bytes.capacity + ends.capacity * 4 + kinds.capacity }

    /// The rules of this list that `other` lacks (same name, scope and action), each once, in this
    /// list's order. Compared on the packed bytes through one open-addressing table over `other`,
    /// so a refresh of a million-name list that a rule holds (SPEC §3) finds its dropped names
    /// without a `String` or a `Set<ListRule>` per rule.
    public func subtracting(_ other: RuleList) -> RuleList {
        var present = RuleTable(capacityFor: other.count)
        for index in other.indices { present.insert(index, of: other) }
        var result = RuleList()
        // Rules already taken into the result are added to a second table, so repeats stay out.
        var taken = RuleTable(capacityFor: 16)
        for index in indices where !present.contains(index, of: self, in: other) {
            if taken.contains(index, of: self, in: result) { continue }
            result.bytes.append(contentsOf: bytes[span(index)])
            result.ends.append(UInt32(result.bytes.count))
            result.kinds.append(kinds[index])
            taken.insert(result.count - 1, of: result)
        }
        return result
    }

    fileprivate func span(_ index: Int) -> Range<Int> { (index == 0 ? 0 : Int(ends[index - 1]))..<Int(ends[index]) }

    fileprivate func hash(_ index: Int) -> UInt64 {
        // The matcher's word-at-a-time hash over the name (names here are already lowercase, so
        // its case folding changes nothing), with the kind mixed in.
        let range = span(index)
        let name = range.isEmpty ? SuffixHash.root : bytes.withUnsafeBufferPointer {
            SuffixHash.extend(SuffixHash.root, label: $0.baseAddress! + range.lowerBound, count: range.count)
        }
        return name ^ ((UInt64(kinds[index]) &+ 1) &* 0x9E37_79B9_7F4A_7C15)
    }

    fileprivate func same(_ index: Int, as otherIndex: Int, in other: RuleList) -> Bool {
        let mine = span(index), theirs = other.span(otherIndex)
        guard kinds[index] == other.kinds[otherIndex], mine.count == theirs.count else { return false }
        if mine.isEmpty { return true }
        return bytes.withUnsafeBufferPointer { a in
            other.bytes.withUnsafeBufferPointer { b in
                memcmp(a.baseAddress! + mine.lowerBound, b.baseAddress! + theirs.lowerBound, mine.count) == 0
            }
        }
    }
}

/// Rule positions of one `RuleList` by hash, for `RuleList.subtracting`. Grows at half full.
/// Each slot keeps the top 32 bits of its rule's hash beside the position, so a probe compares
/// names only when those agree (issue 15: comparing at every probe read the other list's storage
/// at random, a miss each, and made the held-names difference of a refresh as slow as a parse).
private struct RuleTable {
    /// Hash high 32 bits << 32 | position + 1 in the list the table is over; 0 is empty.
    private var slots: [UInt64]
    private var used = 0

    init(capacityFor count: Int) {
        var capacity = 16
        while capacity < count * 2 { capacity <<= 1 }
        slots = Array(repeating: 0, count: capacity)
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
        let old = slots
        slots = Array(repeating: 0, count: old.count * 2)
        used = 0
        for value in old where value != 0 { insert(Int(value & 0xFFFF_FFFF) - 1, hash: list.hash(Int(value & 0xFFFF_FFFF) - 1), of: list) }
    }
}
