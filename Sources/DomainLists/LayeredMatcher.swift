/// A matcher in two layers that answers as one matcher built from the rules of both would: the
/// `lists` layer (the catalog and the fetched lists: up to millions of names, built again only
/// when a list changes) and the `custom` layer (the custom domains people block and the configured
/// allowed hosts: a few names, built again at every change of them). A person's `block
/// new.example` then builds the small layer and reuses the large one as it is: with a
/// 1,000,000-name list in force, a whole build read the list's copy again and took most of a
/// second, and held the engine meanwhile (docs/benchmarks.md, "One custom domain").
///
/// The answer for a name is the union of both layers' answers: its entries are those of every
/// rule covering it in either layer, and it is allowed when an allow rule in either covers it.
/// That is exactly what one matcher gives (`MatcherBuilder.build` folds every ancestor's rules
/// into a node's answers as the same union), so the split changes no answer: allow still beats
/// every block, and a name listed in both layers names the entries of both.
///
/// Entry-set ids: the lists layer's ids stand for themselves, so a name only the lists cover
/// (nearly every query) answers with the lists' own id. A name the custom layer covers answers
/// with the id of the pair (lists set, custom set), numbered after the lists' ids. Every pair a
/// query can meet is found when the layers are put together (`pairs(lists:custom:)`), so the
/// snapshot has a decision for each, and a lookup finds its id by binary search over a small
/// sorted array: no allocation, no lock. Should a pair ever be missed (a defect), the lookup
/// answers with a set of every entry of both layers rather than with either layer's alone: any
/// blocking entry blocks a name (`EnforcementSnapshot.combine`), so a miss can only block more,
/// never open a name a custom rule blocks.
public final class LayeredMatcher: @unchecked Sendable {
    // @unchecked: every field is written once in `init` and only read afterwards.
    public let lists: DomainMatcher
    public let custom: DomainMatcher
    /// `entrySets[id]`: the lists layer's sets, then one per pair (`pairKeys`), sorted entries.
    public let entrySets: [[EntryIndex]]
    /// Sorted keys `lists set << 32 | custom set` of the pairs met, and the id of each.
    private let pairKeys: ContiguousArray<UInt64>
    private let pairIDs: ContiguousArray<UInt32>
    /// The id of the set of every entry either layer names: a missed pair's answer, closed.
    let everyEntryID: UInt32
    /// No custom rule at all: a lookup asks the lists layer alone.
    private let customIsEmpty: Bool

    /// An empty matcher: every name is `noMatch`.
    public convenience init() { self.init(lists: DomainMatcher(), custom: DomainMatcher()) }

    /// Puts two layers together. Costs the custom layer's names, plus one pass over the lists
    /// layer's records when a custom name is also a name of the lists (then the names the lists
    /// hold under it make pairs of their own).
    public init(lists: DomainMatcher, custom: DomainMatcher) {
        self.lists = lists
        self.custom = custom
        customIsEmpty = custom.nodeCount == 0
        var sets = lists.entrySets
        var known: [[EntryIndex]: UInt32] = [:]
        for (id, set) in sets.enumerated() where known[set] == nil { known[set] = UInt32(id) }
        var keys = ContiguousArray<UInt64>(), ids = ContiguousArray<UInt32>()
        for key in Self.pairs(lists: lists, custom: custom).sorted() {
            let set = Self.union(lists.entries(of: EntrySetID(rawValue: UInt32(key >> 32))),
                                 custom.entries(of: EntrySetID(rawValue: UInt32(truncatingIfNeeded: key))))
            let id: UInt32
            if let same = known[set] {
                id = same
            } else {
                id = UInt32(sets.count)
                sets.append(set)
                known[set] = id
            }
            keys.append(key)
            ids.append(id)
        }
        if customIsEmpty {
            everyEntryID = 0
        } else {
            let every = Array(Set(lists.entrySets.joined()).union(custom.entrySets.joined())).sorted()
            if let same = known[every] {
                everyEntryID = same
            } else {
                everyEntryID = UInt32(sets.count)
                sets.append(every)
            }
        }
        entrySets = sets
        pairKeys = keys
        pairIDs = ids
    }

    // MARK: lookup

    /// `DomainMatcher.match(wire:)` over both layers, the name split once.
    public func match(wire name: UnsafeRawBufferPointer) -> MatchResult {
        if customIsEmpty { return lists.match(wire: name) }
        let (fromLists, fromCustom) = DomainMatcher.withWireSuffixes(name, malformed: (MatchResult.noMatch, MatchResult.noMatch)) {
            base, hashes, spans, count in
            (lists.resolve(base, hashes, spans, count: count), custom.resolve(base, hashes, spans, count: count))
        }
        return combine(fromLists, fromCustom)
    }

    /// `DomainMatcher.match(text:)` over both layers.
    public func match(text name: UnsafeRawBufferPointer) -> MatchResult {
        if customIsEmpty { return lists.match(text: name) }
        let (fromLists, fromCustom) = DomainMatcher.withTextSuffixes(name, malformed: (MatchResult.noMatch, MatchResult.noMatch)) {
            base, hashes, spans, count in
            (lists.resolve(base, hashes, spans, count: count), custom.resolve(base, hashes, spans, count: count))
        }
        return combine(fromLists, fromCustom)
    }

    /// Convenience for callers off the hot path (CLI, tests). Makes a copy of the text.
    public func match(_ name: String) -> MatchResult {
        var name = name
        return name.withUTF8 { match(text: UnsafeRawBufferPointer($0)) }
    }

    /// The entries of a result's set.
    public func entries(of id: EntrySetID) -> [EntryIndex] {
        Int(id.rawValue) < entrySets.count ? entrySets[Int(id.rawValue)] : []
    }

    /// Rules in both layers (duplicates included).
    public var ruleCount: Int { lists.ruleCount + custom.ruleCount }

    @inline(__always)
    private func combine(_ fromLists: MatchResult, _ fromCustom: MatchResult) -> MatchResult {
        let allowed = fromLists.isAllowed || fromCustom.isAllowed
        guard fromCustom.entrySet != .none else { return MatchResult(entrySet: fromLists.entrySet, isAllowed: allowed) }
        return MatchResult(entrySet: EntrySetID(rawValue: pairID(fromLists.entrySet.rawValue, fromCustom.entrySet.rawValue)),
                           isAllowed: allowed)
    }

    /// The id of the pair, by binary search over the sorted keys.
    @inline(__always)
    func pairID(_ listSet: UInt32, _ customSet: UInt32) -> UInt32 {
        let key = UInt64(listSet) << 32 | UInt64(customSet)
        return pairKeys.withUnsafeBufferPointer { keys in
            var low = 0, high = keys.count
            while low < high {
                let middle = (low &+ high) >> 1
                if keys[middle] < key { low = middle &+ 1 } else { high = middle }
            }
            if low < keys.count, keys[low] == key { return pairIDs[low] }
            // `pairs` meets every pair a name can give (tests compare whole builds name by name,
            // where this answer would differ); a missed one fails closed.
            return everyEntryID
        }
    }

    // MARK: putting the layers together

    /// Every (lists set, custom set) pair, custom set not empty, that some name can get.
    ///
    /// A name the custom layer covers lies at or under a custom node whose answers are not empty.
    /// What each layer answers for it depends only on the deepest node of that layer on the name's
    /// path and on whether the name is that node or lies below it. So for each such custom node
    /// the pairs are: the node's own name; a name just below it that neither layer holds; and, when
    /// the lists hold the node's name too, each lists node under it, itself and a name just below
    /// it, with what the custom layer answers there (its nodes met on the way down).
    static func pairs(lists: DomainMatcher, custom: DomainMatcher) -> Set<UInt64> {
        var pairs = Set<UInt64>()
        func note(_ fromLists: MatchResult, _ fromCustom: MatchResult) {
            guard fromCustom.entrySet != .none else { return }
            pairs.insert(UInt64(fromLists.entrySet.rawValue) << 32 | UInt64(fromCustom.entrySet.rawValue))
        }
        // Lists node → where the same name lies in the custom layer: its custom node (or `noNode`),
        // what the custom layer answers for a name below it, and its suffix hash.
        var below: [UInt32: (customNode: UInt32, answer: MatchResult, hash: UInt64)] = [:]
        // Each custom node's name, built from its parent's: the custom layer is small.
        var names: [UInt32: [UInt8]] = [:]
        custom.forEachRecord { offset, parent, label, selfAnswer, belowAnswer in
            var name = Array(label)
            if parent != DomainMatcher.rootParent, let parentName = names[parent] { name += [UInt8(ascii: ".")] + parentName }
            names[offset] = name
            guard selfAnswer.entrySet != .none || belowAnswer.entrySet != .none else { return }
            let place = name.withUnsafeBytes { lists.locate(text: $0) }
            note(place.exact, selfAnswer)
            note(place.below, belowAnswer)
            if let node = place.node { below[node] = (offset, belowAnswer, place.hash) }
        }
        guard !below.isEmpty else { return pairs }
        // Parents come before their children in the records, so one pass in order meets every
        // lists node under a marked one after it.
        lists.forEachRecord { offset, parent, label, selfAnswer, belowAnswer in
            guard parent != DomainMatcher.rootParent, let above = below[parent] else { return }
            let hash = SuffixHash.extend(above.hash, label: label.baseAddress!, count: label.count)
            var customNode = DomainMatcher.noNode
            if above.customNode != DomainMatcher.noNode {
                customNode = custom.find(hash: hash, parent: above.customNode, label: label.baseAddress!, count: label.count)
            }
            var customExact = above.answer, customBelow = above.answer
            if customNode != DomainMatcher.noNode {
                let record = custom.recordBase + Int(customNode)
                customExact = custom.answer(record: record, below: false)
                customBelow = custom.answer(record: record, below: true)
            }
            note(selfAnswer, customExact)
            note(belowAnswer, customBelow)
            if below[offset] == nil { below[offset] = (customNode, customBelow, hash) }
        }
        return pairs
    }

    /// Two sorted entry lists as one, sorted, each entry once.
    static func union(_ a: [EntryIndex], _ b: [EntryIndex]) -> [EntryIndex] {
        var result: [EntryIndex] = []
        result.reserveCapacity(a.count + b.count)
        var i = 0, j = 0
        while i < a.count || j < b.count {
            if j == b.count || (i < a.count && a[i] < b[j]) {
                result.append(a[i]); i += 1
            } else if i == a.count || b[j] < a[i] {
                result.append(b[j]); j += 1
            } else {
                result.append(a[i]); i += 1; j += 1
            }
        }
        return result
    }
}

extension DomainMatcher {
    /// Where a name in text form lies: its record when the whole name is a node, the answer a
    /// query of the name gets, the answer a name below it that no record holds gets (the below
    /// answer of the deepest node on its path), and its suffix hash. Off the hot path.
    func locate(text name: UnsafeRawBufferPointer) -> Place {
        Self.withTextSuffixes(name, malformed: Place(node: nil, exact: .noMatch, below: .noMatch, hash: 0)) { base, hashes, spans, count -> Place in
            let (parent, reached) = deepestNode(base, hashes, spans, count: count)
            guard reached > 0 else { return Place(node: nil, exact: .noMatch, below: .noMatch, hash: hashes[count - 1]) }
            let record = recordBase + Int(parent)
            let belowAnswer = answer(record: record, below: true)
            return reached == count
                ? Place(node: parent, exact: answer(record: record, below: false), below: belowAnswer, hash: hashes[count - 1])
                : Place(node: nil, exact: belowAnswer, below: belowAnswer, hash: hashes[count - 1])
        }
    }

    /// What `locate` finds.
    struct Place {
        var node: UInt32?
        var exact: MatchResult
        var below: MatchResult
        var hash: UInt64
    }

    /// Every record in table order, where a parent comes before its children: its offset, its
    /// parent's (`rootParent` at the top), its label and its two answers. Off the hot path.
    func forEachRecord(_ body: (UInt32, UInt32, UnsafeBufferPointer<UInt8>, MatchResult, MatchResult) -> Void) {
        let end = recordBytes - Self.spareRecordBytes
        var offset = 0, index = 0
        while offset < end {
            // A whole pass over a large lists layer yields on the way, as the build's passes do.
            if index & 1023 == 0 { CooperativeYield.point() }
            index += 1
            let record = recordBase + offset
            let parent = record.loadUnaligned(as: UInt32.self)
            let lengthAndForm = record.load(fromByteOffset: Self.lengthFieldOffset, as: UInt8.self)
            let length = Int(lengthAndForm & Self.labelLengthMask)
            let form = AnswerForm(rawValue: lengthAndForm >> 6)!
            let label = UnsafeBufferPointer(start: (record + Self.lengthFieldOffset + 1).assumingMemoryBound(to: UInt8.self), count: length)
            body(UInt32(offset), parent, label, answer(record: record, below: false), answer(record: record, below: true))
            offset += Self.lengthFieldOffset + 1 + length + (form == .none ? 0 : form == .both ? 2 : 1) * answerWidth
        }
    }
}
