/// An immutable map from a DNS name to the entries that block it, built by `MatcherBuilder`.
///
/// Layout: a trie of labels read right to left (`com` → `example` → `www`). Each node is one
/// variable-length record in a single byte table. Records follow one another with no padding, so
/// their multi-byte fields are read with unaligned loads:
///
///     +0        parent record (UInt32 byte offset in the table, native byte order; UInt32.max
///               for a top-level label)
///     +4        label length in bits 0–5 (1…63, RFC 1035 §2.3.4), answer form in bits 6–7
///     +5        the label bytes, lowercase
///     +5+length the answers the form stores, `answerWidth` bytes each, little-endian
///
/// A node has two answers: "self" for a query equal to its name and "below" for a query under
/// it. An answer is an entry-set id with the allowed bit on top: bit 15 of a 2-byte answer, bit 31
/// of a 4-byte one. The form says which answers are stored (measured: most nodes store none or one):
///
///     0  none       nothing stored; self and below are 0 (no entry, not allowed). Most
///                   parents a listed name passes through (`com`, `example.com` of `ads.example.com`).
///     1  same       one answer, both self and below: a rule covering a name and its subdomains
///     2  self only  one answer for self; below is 0: an exact-name rule (`|example.com^`) with
///                   no rule above it
///     3  both       the self answer, then the below answer (below only: self is stored as 0)
///
/// `answerWidth` is chosen per matcher at build time: 2 bytes when every entry-set id is below
/// 32,768 (so it fits beside the allowed bit), else 4. A lookup reads an answer as a 4-byte
/// little-endian load at the place the form gives (so a 2-byte answer is its low half), masked to
/// the width, or to zero where the form stores none; the table ends with four spare zero bytes, so
/// that the load never reads past its end.
///
/// What a probe verifies and the answers sit side by side, so verifying a probe and reading the
/// answer touch one cache line (occasionally two). Nodes are found through one open-addressing
/// table keyed by the hash of the whole suffix (`SuffixHash`).
/// Each slot is 32 bits: the low bits hold the record's byte offset + 1 (0 = empty), the high
/// bits a tag from the hash that rejects most wrong slots without touching the records. A hit is
/// verified exactly (the parent is the node the previous label found, and the label bytes are
/// equal), so no hash collision can give a wrong answer.
///
/// A lookup first computes the hash of every suffix of the query and loads the first slot each
/// will probe; those loads do not depend on one another, so the processor overlaps their cache
/// misses instead of paying them one after the other. Then it walks the labels from the right
/// until the trie has no edge and answers from the deepest node reached: both answers already fold
/// in every ancestor's rules (`MatcherBuilder.build`). Nothing is allocated and no `String` is made.
///
/// Semantics (SPEC §1): a rule on `example.com` covers it and every name under it; `*.example.com`
/// covers the names under it but not `example.com`; `|example.com^` covers only `example.com`.
/// Allow beats block: an allow rule on a name or on any parent suffix makes the answer allowed, so
/// allowing `a.example.com` while `example.com` is blocked opens `a.example.com` and its
/// subdomains, and nothing else under `example.com`.
public final class DomainMatcher: @unchecked Sendable {
    // @unchecked: both tables are written once in `init` and only read afterwards; they are freed
    // in `deinit`, when no reader can hold the instance.
    private let slots: TableMemory.Buffer<UInt32>
    private let slotMask: Int
    private let indexMask: UInt32
    /// Node records, addressed in bytes.
    private let records: TableMemory.Buffer<UInt8>
    let recordBase: UnsafeRawPointer

    /// The distinct entry sets; `entrySets[Int(id.rawValue)]` lists the entries of a result, sorted.
    /// `entrySets[0]` is the empty set.
    public let entrySets: [[EntryIndex]]
    /// Rules that went into the build (duplicates included).
    public let ruleCount: Int
    /// Names (trie nodes) stored, including the parents that the rules' names pass through.
    public let nodeCount: Int

    /// Bytes per stored answer, 2 or 4.
    let answerWidth: Int
    /// Keeps the `answerWidth` low bytes of a 4-byte load.
    private let answerMask: UInt32
    /// The allowed bit of a stored answer: bit 15 or bit 31.
    private let storedAllowBit: UInt32

    static let noNode = UInt32.max
    static let rootParent = UInt32.max
    /// The allowed bit in the builder's 32-bit answers, and in 4-byte stored ones.
    static let allowBit: UInt32 = 1 << 31
    /// Offset of the length-and-form byte; the label bytes follow it.
    static let lengthFieldOffset = 4
    /// Zero bytes after the last record: a 4-byte answer load reads up to 4 past it.
    static let spareRecordBytes = 4
    static let labelLengthMask: UInt8 = 63
    /// Entry-set ids up to this fit a 2-byte answer beside its allowed bit (bit 15).
    static let maxNarrowSetID: UInt32 = 0x7FFF

    /// The answer forms of the layout above: which answers a record stores.
    enum AnswerForm: UInt8 {
        case none = 0, same = 1, selfOnly = 2, both = 3
    }
    /// Labels per name: a name has at most 127 (255 octets on the wire, RFC 1035 §3.1).
    static let maxLabels = 128

    /// An empty matcher: every name is `noMatch`.
    public convenience init() {
        self.init(recordTable: TableMemory.allocate(UInt8.self, count: Self.spareRecordBytes), nodeHashes: UnsafeBufferPointer(start: nil, count: 0),
                  entrySets: [[]], ruleCount: 0, answerWidth: 2)
    }

    /// - Parameters:
    ///   - recordTable: the records, written in place by the caller (`MatcherBuilder` writes them
    ///     straight into it, so a large table is not made twice), followed by `spareRecordBytes`
    ///     zero bytes. The matcher owns and frees it.
    ///   - nodeHashes: each record's `SuffixHash`, in record order (one per node).
    ///   - answerWidth: 2 or 4, the bytes per stored answer (`MatcherBuilder` chooses).
    ///
    /// Each record's offset is found by walking the records, so the builder passes no offsets.
    init(recordTable: TableMemory.Buffer<UInt8>, nodeHashes: UnsafeBufferPointer<UInt64>, entrySets: [[EntryIndex]], ruleCount: Int,
         answerWidth: Int) {
        let nodeCount = nodeHashes.count
        precondition(answerWidth == 2 || answerWidth == 4, "answers are 2 or 4 bytes")
        precondition(recordTable.count >= Self.spareRecordBytes, "the record table ends with its spare bytes")
        let recordCount = recordTable.count - Self.spareRecordBytes
        self.records = recordTable
        recordBase = UnsafeRawPointer(recordTable.base)
        self.answerWidth = answerWidth
        answerMask = answerWidth == 2 ? 0xFFFF : UInt32.max
        storedAllowBit = answerWidth == 2 ? 1 << 15 : Self.allowBit
        self.entrySets = entrySets
        self.ruleCount = ruleCount
        self.nodeCount = nodeCount

        // Load factor between 1/3 and 2/3: short probe runs, 4 to 12 bytes of table per node.
        var capacity = 16
        while capacity < nodeCount + nodeCount / 2 { capacity <<= 1 }
        slotMask = capacity - 1
        var indexBits: UInt32 = 1
        while (UInt64(1) << indexBits) <= UInt64(recordCount) + 1 { indexBits += 1 }
        indexMask = indexBits >= 32 ? UInt32.max : (UInt32(1) << indexBits) - 1
        slots = TableMemory.allocate(UInt32.self, count: capacity)
        Self.fillSlots(slots, mask: slotMask, indexMask: indexMask, records: recordBase, recordCount: recordCount,
                       nodeHashes: nodeHashes, answerWidth: answerWidth)
    }

    /// Puts every record in the slots, in record order, each at its hash.
    private static func fillSlots(
        _ slots: TableMemory.Buffer<UInt32>, mask: Int, indexMask: UInt32, records: UnsafeRawPointer, recordCount: Int,
        nodeHashes: UnsafeBufferPointer<UInt64>, answerWidth: Int
    ) {
        var offset = 0
        for (index, nodeHash) in nodeHashes.enumerated() {
            // A build's last loop: a million nodes' random writes yield on the way (SPEC §9.10).
            if index & 1023 == 0 { CooperativeYield.point() }
            precondition(offset < recordCount, "the record table holds its nodes")
            var slot = Int(truncatingIfNeeded: nodeHash) & mask
            while slots[slot] != 0 { slot = (slot &+ 1) & mask }
            slots[slot] = (UInt32(truncatingIfNeeded: nodeHash >> 32) & ~indexMask) | (UInt32(offset) + 1)
            let lengthAndForm = records.load(fromByteOffset: offset + lengthFieldOffset, as: UInt8.self)
            let form = AnswerForm(rawValue: lengthAndForm >> 6)!
            let answers = form == .none ? 0 : form == .both ? 2 : 1
            offset += lengthFieldOffset + 1 + Int(lengthAndForm & labelLengthMask) + answers * answerWidth
        }
    }

    deinit {
        TableMemory.deallocate(slots)
        TableMemory.deallocate(records)
    }

    // MARK: lookup

    /// Looks up a name in text form, such as `www.Example.com.`: ASCII, any case, optional
    /// trailing dot. Non-ASCII bytes never match, since stored names are A-labels.
    public func match(text name: UnsafeRawBufferPointer) -> MatchResult {
        Self.withTextSuffixes(name, malformed: MatchResult.noMatch) { base, hashes, spans, count in resolve(base, hashes, spans, count: count) }
    }

    /// Looks up a name in DNS wire format (RFC 1035 §3.1: length-prefixed labels ending in a zero
    /// octet), as it sits in a query's question, any case. A compression pointer or a malformed
    /// name yields `noMatch`; the wire parser rejects those before asking.
    public func match(wire name: UnsafeRawBufferPointer) -> MatchResult {
        Self.withWireSuffixes(name, malformed: MatchResult.noMatch) { base, hashes, spans, count in resolve(base, hashes, spans, count: count) }
    }

    /// Splits a name in text form into labels and runs `body` with the name's bytes, each level's
    /// suffix hash and label span (level 0 is the top-level label) and the level count; `malformed`
    /// for a name no stored name can equal. Shared by `match(text:)` and `LayeredMatcher`, which
    /// asks two matchers with one split.
    @inline(__always)
    static func withTextSuffixes<R>(
        _ name: UnsafeRawBufferPointer, malformed: R,
        _ body: (UnsafePointer<UInt8>, UnsafeMutableBufferPointer<UInt64>, UnsafeMutableBufferPointer<LabelSpan>, Int) -> R
    ) -> R {
        guard let base = name.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return malformed }
        var end = name.count
        if end > 0, base[end - 1] == UInt8(ascii: ".") { end -= 1 }
        // No stored name is longer, so a longer query cannot match.
        guard end > 0, end <= DomainNormalizer.maxNameLength else { return malformed }
        return withScratch { hashes, spans in
            var count = 0
            var hash = SuffixHash.root
            while true {
                var start = end
                while start > 0, base[start - 1] != UInt8(ascii: ".") { start -= 1 }
                // Only a name of nothing but dots has this many labels, and none is stored.
                guard count < Self.maxLabels else { return malformed }
                hash = SuffixHash.extend(hash, label: base + start, count: end - start)
                hashes[count] = hash
                spans[count] = LabelSpan(start: UInt8(start), length: UInt8(end - start))
                count += 1
                if start == 0 { break }
                end = start - 1
            }
            return body(base, hashes, spans, count)
        }
    }

    /// `withTextSuffixes` for a name in wire form (`match(wire:)`).
    @inline(__always)
    static func withWireSuffixes<R>(
        _ name: UnsafeRawBufferPointer, malformed: R,
        _ body: (UnsafePointer<UInt8>, UnsafeMutableBufferPointer<UInt64>, UnsafeMutableBufferPointer<LabelSpan>, Int) -> R
    ) -> R {
        guard let base = name.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return malformed }
        let limit = min(name.count, 255)
        return withScratch { hashes, spans in
            // Labels are found left to right but hashed right to left: note them, then reverse.
            var count = 0
            var position = 0
            while true {
                guard position < limit else { return malformed }
                let length = Int(base[position])
                if length == 0 { break }
                // The terminating zero octet must follow the label inside the buffer.
                guard length <= 63, position + 1 + length < limit, count < Self.maxLabels else { return malformed }
                spans[count] = LabelSpan(start: UInt8(position + 1), length: UInt8(length))
                count += 1
                position += 1 + length
            }
            guard count > 0 else { return malformed }
            var topFirst = UnsafeMutableBufferPointer(rebasing: spans[0..<count])
            topFirst.reverse()
            var hash = SuffixHash.root
            for level in 0..<count {
                hash = SuffixHash.extend(hash, label: base + Int(spans[level].start), count: Int(spans[level].length))
                hashes[level] = hash
            }
            return body(base, hashes, spans, count)
        }
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

    /// Where one label lies in the query. Names are at most 255 octets, so a byte holds each.
    struct LabelSpan {
        var start: UInt8
        var length: UInt8
    }

    /// Runs `body` with room for one name's suffix hashes and label spans. Both buffers stay at or
    /// under 1 KiB, the size `withUnsafeTemporaryAllocation` always places on the stack.
    @inline(__always)
    private static func withScratch<R>(
        _ body: (UnsafeMutableBufferPointer<UInt64>, UnsafeMutableBufferPointer<LabelSpan>) -> R
    ) -> R {
        withUnsafeTemporaryAllocation(of: UInt64.self, capacity: Self.maxLabels) { hashes in
            withUnsafeTemporaryAllocation(of: LabelSpan.self, capacity: Self.maxLabels) { spans in
                body(hashes, spans)
            }
        }
    }

    /// Walks the labels from the top-level one down and answers from the deepest node found.
    /// `hashes[level]` and `spans[level]` describe level 0 (the top-level label) to `count - 1`.
    @inline(__always)
    func resolve(
        _ base: UnsafePointer<UInt8>, _ hashes: UnsafeMutableBufferPointer<UInt64>,
        _ spans: UnsafeMutableBufferPointer<LabelSpan>, count: Int
    ) -> MatchResult {
        // Load every level's first slot before walking. The loads do not depend on one another,
        // so their cache misses overlap; the walk then finds them in cache. If every first slot is
        // empty, even the top-level label is absent.
        var occupied: UInt32 = 0
        for level in 0..<count { occupied |= slots[Int(truncatingIfNeeded: hashes[level]) & slotMask] }
        guard occupied != 0 else { return .noMatch }

        let (parent, reached) = deepestNode(base, hashes, spans, count: count)
        guard reached > 0 else { return .noMatch }
        return answer(record: recordBase + Int(parent), below: reached < count)
    }

    /// The deepest node on the name's path from the top-level label down, and how many levels
    /// it took (0: not even the top-level label is held).
    @inline(__always)
    func deepestNode(
        _ base: UnsafePointer<UInt8>, _ hashes: UnsafeMutableBufferPointer<UInt64>,
        _ spans: UnsafeMutableBufferPointer<LabelSpan>, count: Int
    ) -> (parent: UInt32, reached: Int) {
        var parent = Self.rootParent
        var reached = 0
        while reached < count {
            let span = spans[reached]
            let node = find(hash: hashes[reached], parent: parent, label: base + Int(span.start), count: Int(span.length))
            if node == Self.noNode { break }
            parent = node
            reached += 1
        }
        return (parent, reached)
    }

    /// The self or below answer of a record, decoded from its form (layout above) without a
    /// branch: whether a node stores an answer differs from one query to the next, so a branch
    /// on it would be mispredicted often.
    @inline(__always)
    func answer(record: UnsafeRawPointer, below: Bool) -> MatchResult {
        let lengthAndForm = record.load(fromByteOffset: Self.lengthFieldOffset, as: UInt8.self)
        let formAndSide = Int(lengthAndForm >> 6) &<< 1 | (below ? 1 : 0)
        // Only the below answer of a `both` record is not the first one stored.
        let offset = Self.lengthFieldOffset + 1 + Int(lengthAndForm & Self.labelLengthMask)
            + (formAndSide == Int(AnswerForm.both.rawValue) &<< 1 | 1 ? answerWidth : 0)
        // Four bytes even for a 2-byte answer, or where nothing is stored (the next record's
        // bytes): the masks drop what is not the answer, and the spare bytes at the table's end
        // keep the load inside it.
        let isStored = UInt32(truncatingIfNeeded: Self.storedAnswers >> formAndSide) & 1
        let raw = UInt32(littleEndian: record.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
            & answerMask & (0 &- isStored)
        return MatchResult(entrySet: EntrySetID(rawValue: raw & ~storedAllowBit), isAllowed: raw & storedAllowBit != 0)
    }

    /// Bit `form * 2 + (below ? 1 : 0)` is set when a record of that form stores that answer:
    /// `none` stores neither, `selfOnly` only self (bit 4), `same` and `both` both (bits 2, 3, 6, 7).
    private static let storedAnswers = 0b1101_1100

    @inline(__always)
    func find(hash: UInt64, parent: UInt32, label: UnsafePointer<UInt8>, count: Int) -> UInt32 {
        let tag = UInt32(truncatingIfNeeded: hash >> 32) & ~indexMask
        var slot = Int(truncatingIfNeeded: hash) & slotMask
        while true {
            let value = slots[slot]
            if value == 0 { return Self.noNode }
            if value & ~indexMask == tag {
                let node = (value & indexMask) &- 1
                if matches(node: node, parent: parent, label: label, count: count) { return node }
            }
            slot = (slot &+ 1) & slotMask
        }
    }

    @inline(__always)
    private func matches(node: UInt32, parent: UInt32, label: UnsafePointer<UInt8>, count: Int) -> Bool {
        let record = recordBase + Int(node)
        guard record.loadUnaligned(as: UInt32.self) == parent,
              Int(record.load(fromByteOffset: Self.lengthFieldOffset, as: UInt8.self) & Self.labelLengthMask) == count
        else { return false }
        let stored = (record + Self.lengthFieldOffset + 1).assumingMemoryBound(to: UInt8.self)
        var index = 0
        while index < count {
            if stored[index] != DomainNormalizer.lowercased(label[index]) { return false }
            index &+= 1
        }
        return true
    }

    // MARK: figures

    /// Bytes of the record table, the spare bytes included.
    var recordBytes: Int { records.count }

    /// Bytes of every table a lookup reads: hash slots and node records (labels, answers and the
    /// spare bytes included), plus
    /// the entry-set table counted by element (16 bytes per set for its array, 4 per entry).
    /// Allocator overhead is not included.
    public var tableBytes: Int {
        slots.count * MemoryLayout<UInt32>.stride + recordBytes
            + entrySets.reduce(0) { $0 + 16 + $1.count * MemoryLayout<EntryIndex>.stride }
    }
}
