/// Collects rules and builds a `DomainMatcher`. Runs off the hot path; the helper
/// publishes the result whole in its `EnforcementBox`.
///
/// Build cost is linear in the labels added: each label is one probe in a growing hash table,
/// then one pass over the nodes in creation order (parents always come before their children)
/// folds each ancestor's rules into its descendants' answers.
public struct MatcherBuilder {
    /// Each node's parent node (`DomainMatcher.rootParent` for a top-level label).
    private var parents: [UInt32] = []
    /// Offset of each node's record in `records`.
    private var nodeOffsets: [UInt32] = []
    /// `SuffixHash` of each node's whole name, kept to rehash without rereading labels.
    private var hashes: [UInt64] = []
    /// One record per node: the parent's record offset (UInt32, `rootParent` at the top), the
    /// node's index (UInt32), the label length, the lowercase label. What a probe verifies lies in
    /// one place, so a probe that finds a node costs one cache miss, not one per array
    /// (issue 15: three dependent misses per label were most of a 1,000,000-name build).
    private var records: [UInt8] = []
    private var ownSelf: [UInt32] = []
    private var ownBelow: [UInt32] = []
    /// Bit 0: allow the name itself; bit 1: allow the names under it.
    private var ownAllow: [UInt8] = []
    /// Slot = edge-hash high 32 bits << 32 | record offset + 1; 0 is empty.
    private var table: [UInt64] = Array(repeating: 0, count: 1024)
    private var interner = EntrySetInterner()
    private var ruleCount = 0
    /// Read from the loads that warm a batch's slots and records, so they are not optimized away.
    private var warmed: UInt64 = 0
    /// Held by every copy of this builder: uniquely referenced only when no other copy exists, so
    /// only then do the scratch arrays go back in steps (`release`); a copy (a caller that keeps
    /// the builder it builds from) shares them, and they are then only let go.
    private var soleCopy = SoleCopy()
    private final class SoleCopy {}

    /// Empties a scratch array: its pages handed back in steps (`PageRelease`) when no other copy
    /// of this builder can share it (`sole`, from `soleCopy`), else only let go.
    private static func release<T: BitwiseCopyable>(_ array: inout [T], sole: Bool) {
        if sole { PageRelease.release(&array) } else { array = [] }
    }

    /// Record field offsets (see `records`).
    private static let nodeField = 4
    private static let lengthField = 8
    private static let labelField = 9

    public init() {}

    /// Blocks `name` for `entry`.
    public mutating func add(_ name: DomainName, scope: MatchScope = .nameAndSubdomains, entry: EntryIndex) {
        withBytes(of: name) { add(normalizedName: $0, scope: scope, entry: entry) }
    }

    /// Allows `name`; allow beats every block.
    public mutating func allow(_ name: DomainName, scope: MatchScope = .nameAndSubdomains) {
        withBytes(of: name) { allow(normalizedName: $0, scope: scope) }
    }

    /// Adds a parsed list: its block rules block for `entry`, its allow rules (`@@||name^`) allow.
    public mutating func add(_ rules: RuleList, entry: EntryIndex) {
        addAll(rules, entry: entry, allowingAll: false)
    }

    /// Adds every rule of a list as an allow rule, whatever its action (an always-allow list).
    public mutating func allowAll(_ rules: RuleList) {
        addAll(rules, entry: EntryIndex(0), allowingAll: true)
    }

    /// Rules per batch whose table slots and records are loaded before any of them is inserted.
    private static let batchSize = 32

    /// The rules of a list, in order, a batch at a time. The result is what adding them one by
    /// one gives; only the memory is touched in a different order: each batch first hashes every
    /// suffix of its names, then loads the table slot of each, then the record a tag-matching slot
    /// points at, and only then inserts. Those loads do not depend on one another, so their cache
    /// misses overlap, and the inserts find what they read in cache (issue 15: a 1,000,000-name
    /// build was mostly misses taken one after the other).
    private mutating func addAll(_ rules: RuleList, entry: EntryIndex, allowingAll: Bool) {
        reserve(rules: rules.count, nameBytes: rules.nameByteCount)
        rules.withPackedStorage { bytes, ends, kinds in
            guard let base = bytes.baseAddress else { return }
            var batchStart = 0
            while batchStart < ends.count {
                // A million-name list is 30,000 batches of ~10 µs: a refresh yields between them (issue 15).
                CooperativeYield.point()
                let batchEnd = min(batchStart + Self.batchSize, ends.count)
                hashBatch(base, ends, batchStart..<batchEnd)
                warmBatch()
                var label = 0
                for index in batchStart..<batchEnd {
                    let labels = Int(batch.labelCounts[index - batchStart])
                    defer { label += labels }
                    guard let node = batchNode(firstLabel: label, labels: labels, base: base) else { continue }
                    let scope = RuleList.scope(ofKind: kinds[index])
                    if allowingAll || RuleList.action(ofKind: kinds[index]) == .allow {
                        allow(node: node, scope: scope)
                    } else {
                        add(node: node, scope: scope, entry: entry)
                    }
                }
                batchStart = batchEnd
            }
        }
    }

    /// One batch's suffixes, top-level label first within each name. The arrays only grow;
    /// `count` says how much of them the batch uses.
    private struct Batch {
        var hashes: [UInt64] = []
        var spans: [(start: UInt32, count: UInt32)] = []
        /// Labels per name; 0 for a name that is not stored.
        var labelCounts: [UInt32] = []
        var count = 0
    }
    private var batch = Batch()

    /// Fills `batch` with the suffix hashes and label spans of the names `range`, the one walk every
    /// name added takes (`addAll`, `insert`): right to left, empty labels skipped (normalized names
    /// have none; skipping one keeps a caller's slip harmless), a name with a label over 63 bytes
    /// left out.
    private mutating func hashBatch(_ base: UnsafePointer<UInt8>, _ ends: UnsafeBufferPointer<UInt32>, _ range: Range<Int>) {
        // A stored label takes at least one byte and its dot, so this bounds the batch's labels.
        let firstByte = range.lowerBound == 0 ? 0 : Int(ends[range.lowerBound - 1])
        let bound = Int(ends[range.upperBound - 1]) - firstByte + range.count
        if batch.hashes.count < bound {
            batch.hashes = [UInt64](repeating: 0, count: bound)
            batch.spans = Array(repeating: (0, 0), count: bound)
        }
        if batch.labelCounts.count < range.count { batch.labelCounts = [UInt32](repeating: 0, count: range.count) }
        var used = 0
        batch.hashes.withUnsafeMutableBufferPointer { hashes in
            batch.spans.withUnsafeMutableBufferPointer { spans in
                batch.labelCounts.withUnsafeMutableBufferPointer { labelCounts in
                    for index in range {
                        let first = used
                        let nameStart = index == 0 ? 0 : Int(ends[index - 1])
                        var end = Int(ends[index])
                        var hash = SuffixHash.root
                        var stored = true
                        while true {
                            var start = end
                            while start > nameStart, base[start - 1] != UInt8(ascii: ".") { start -= 1 }
                            if end - start > Int(DomainMatcher.labelLengthMask) {
                                stored = false
                                break
                            }
                            if start < end {
                                hash = SuffixHash.extend(hash, label: base + start, count: end - start)
                                hashes[used] = hash
                                spans[used] = (UInt32(start), UInt32(end - start))
                                used += 1
                            }
                            if start == nameStart { break }
                            end = start - 1
                        }
                        if !stored { used = first }
                        labelCounts[index - range.lowerBound] = UInt32(used - first)
                    }
                }
            }
        }
        batch.count = used
    }

    /// Loads the slots, then the records, that inserting the batch will probe first.
    private mutating func warmBatch() {
        var sink: UInt64 = 0
        table.withUnsafeBufferPointer { table in
            let mask = table.count - 1
            for hash in batch.hashes[..<batch.count] { sink |= table[Int(truncatingIfNeeded: hash) & mask] }
        }
        records.withUnsafeBufferPointer { records in
            table.withUnsafeBufferPointer { table in
                let mask = table.count - 1
                for hash in batch.hashes[..<batch.count] {
                    let value = table[Int(truncatingIfNeeded: hash) & mask]
                    guard value & 0xFFFF_FFFF_0000_0000 == hash & 0xFFFF_FFFF_0000_0000 else { continue }
                    let offset = Int(value & 0xFFFF_FFFF) - 1
                    if offset >= 0, offset < records.count { sink |= UInt64(records[offset]) }
                }
            }
        }
        warmed ^= sink
    }

    /// Makes room for `rules` more names of `nameBytes` bytes in all, so that the table is not
    /// rehashed and the arrays not copied while they go in. Most names of a list add one node,
    /// so that is the estimate; a list of repeated names only reserves more than it uses.
    private mutating func reserve(rules: Int, nameBytes: Int) {
        guard rules > 0 else { return }
        let nodes = parents.count + rules
        var capacity = table.count
        while capacity < nodes * 2 { capacity <<= 1 }
        if capacity > table.count { rehash(capacity: capacity) }
        let sole = isKnownUniquelyReferenced(&soleCopy)
        // At least doubling, so that many lists added one after the other (each reserving its
        // own size) still copy each array only a logarithmic number of times. The old storage
        // goes back in steps (`PageRelease`), not in the one free `reserveCapacity` would make.
        func reserve<T: BitwiseCopyable>(_ array: inout [T], _ count: Int) {
            guard array.capacity < count else { return }
            var bigger: [T] = []
            bigger.reserveCapacity(max(count, array.capacity * 2))
            bigger.append(contentsOf: array)
            swap(&bigger, &array)
            if sole { PageRelease.release(&bigger) }
        }
        reserve(&parents, nodes)
        reserve(&nodeOffsets, nodes)
        reserve(&hashes, nodes)
        reserve(&ownSelf, nodes)
        reserve(&ownBelow, nodes)
        reserve(&ownAllow, nodes)
        let recordBytes = records.count + nameBytes + rules * Self.labelField
        reserve(&records, recordBytes)
    }

    /// Blocks a name already in normalized form (lowercase ASCII, A-labels, no trailing dot), such as
    /// a `RuleList` name. ASCII case is folded anyway; an empty name is ignored.
    public mutating func add(normalizedName name: UnsafeBufferPointer<UInt8>, scope: MatchScope, entry: EntryIndex) {
        guard let node = insert(name) else { return }
        add(node: node, scope: scope, entry: entry)
    }

    private mutating func add(node: UInt32, scope: MatchScope, entry: EntryIndex) {
        ruleCount += 1
        let index = Int(node)
        if scope != .subdomainsOnly { ownSelf[index] = interner.adding(entry, to: ownSelf[index]) }
        if scope != .exactName { ownBelow[index] = interner.adding(entry, to: ownBelow[index]) }
    }

    /// Allows a name that is already normalized.
    public mutating func allow(normalizedName name: UnsafeBufferPointer<UInt8>, scope: MatchScope) {
        guard let node = insert(name) else { return }
        allow(node: node, scope: scope)
    }

    private mutating func allow(node: UInt32, scope: MatchScope) {
        ruleCount += 1
        let index = Int(node)
        if scope != .subdomainsOnly { ownAllow[index] |= 1 }
        if scope != .exactName { ownAllow[index] |= 2 }
    }

    /// Folds ancestors into every node's answers and lays out the immutable tables.
    public consuming func build() -> DomainMatcher { build(wideAnswers: false) }

    /// `wideAnswers` stores 4-byte answers even when 2 would do, so that tests can run the wide
    /// layout on small rule sets; `build()` never asks for it.
    consuming func build(wideAnswers: Bool) -> DomainMatcher {
        // The probe table and the batch buffers are done with: freed before the matcher's tables
        // are made, so the build's peak holds neither twice. Every large scratch array goes back
        // in steps (`PageRelease`): a 1,000,000-name build's scratch is tens of MB, and freeing it
        // in one call held a woken event loop off the core for milliseconds (issue 15).
        let sole = isKnownUniquelyReferenced(&soleCopy)
        Self.release(&table, sole: sole)
        batch = Batch()
        let nodeCount = parents.count
        // Effective sets are computed in the builder's interner, then renumbered so that the
        // published table holds only the sets some answer uses.
        var effectiveBelow = [UInt32](repeating: 0, count: nodeCount)
        var allowBelow = [Bool](repeating: false, count: nodeCount)
        var renumber = [UInt32](repeating: UInt32.max, count: interner.sets.count)
        var published: [[EntryIndex]] = [[]]
        renumber[0] = 0
        func publish(_ id: UInt32) -> UInt32 {
            // Unions made in this pass add sets to the interner, so the map grows as it goes.
            if Int(id) >= renumber.count {
                renumber.append(contentsOf: repeatElement(UInt32.max, count: Int(id) + 1 - renumber.count))
            }
            if renumber[Int(id)] == UInt32.max {
                renumber[Int(id)] = UInt32(published.count)
                published.append(interner.sets[Int(id)])
            }
            return renumber[Int(id)]
        }

        // First pass: every node's answers (32-bit, allowed in bit 31). Their width in the
        // table depends on how many sets get published, known only once all are.
        var selfAnswers = [UInt32](repeating: 0, count: nodeCount)
        var belowAnswers = [UInt32](repeating: 0, count: nodeCount)
        for node in 0..<nodeCount {
            // Each pass over the nodes yields on the way (`CooperativeYield`, issue 15).
            if node & 1023 == 0 { CooperativeYield.point() }
            // Parents are created before their children, so theirs are already final here.
            let parent = parents[node]
            let isTopLevel = parent == DomainMatcher.rootParent
            let inheritedSet = isTopLevel ? 0 : effectiveBelow[Int(parent)]
            let inheritedAllow = isTopLevel ? false : allowBelow[Int(parent)]
            let selfSet = interner.union(ownSelf[node], inheritedSet)
            let belowSet = interner.union(ownBelow[node], inheritedSet)
            effectiveBelow[node] = belowSet
            allowBelow[node] = inheritedAllow || ownAllow[node] & 2 != 0
            let selfAllowed = inheritedAllow || ownAllow[node] & 1 != 0
            selfAnswers[node] = publish(selfSet) | (selfAllowed ? DomainMatcher.allowBit : 0)
            belowAnswers[node] = publish(belowSet) | (allowBelow[node] ? DomainMatcher.allowBit : 0)
        }

        // Second pass: the records, with the narrowest answer width that holds every id, written
        // in place into a table sized first (issue 15: appending field by field was a tenth of a
        // 1,000,000-name build).
        let answerWidth = !wideAnswers && UInt32(published.count - 1) <= DomainMatcher.maxNarrowSetID ? 2 : 4
        var total = 0
        for node in 0..<nodeCount {
            if node & 4095 == 0 { CooperativeYield.point() }  // a few reads per node: points further apart
            let form = Self.form(self: selfAnswers[node], below: belowAnswers[node])
            total += DomainMatcher.lengthFieldOffset + 1 + Int(records[Int(nodeOffsets[node]) + Self.lengthField])
                + Self.storedAnswerCount(form) * answerWidth
        }
        // Offsets are 32-bit and UInt32.max means "no parent"; no real list comes near 4 GiB.
        precondition(total < Int(UInt32.max), "the record table is limited to 4 GiB")
        var publishedOffsets = [UInt32](repeating: 0, count: nodeCount)
        // Written straight into the matcher's own table (zero-filled, spare bytes included).
        let table = TableMemory.allocate(UInt8.self, count: total + DomainMatcher.spareRecordBytes)
        let out = UnsafeMutableRawPointer(table.base)
        records.withUnsafeBufferPointer { source in
            var position = 0
            for node in 0..<nodeCount {
                if node & 1023 == 0 { CooperativeYield.point() }
                let parent = parents[node]
                publishedOffsets[node] = UInt32(position)
                let parentOffset = parent == DomainMatcher.rootParent ? DomainMatcher.rootParent : publishedOffsets[Int(parent)]
                out.storeBytes(of: parentOffset, toByteOffset: position, as: UInt32.self)
                let labelAt = Int(nodeOffsets[node]) + Self.lengthField
                let length = source[labelAt]
                precondition(length <= DomainMatcher.labelLengthMask, "labels are at most 63 bytes (RFC 1035 §2.3.4)")
                let selfAnswer = selfAnswers[node], belowAnswer = belowAnswers[node]
                let form = Self.form(self: selfAnswer, below: belowAnswer)
                out.storeBytes(of: length | form.rawValue << 6, toByteOffset: position + 4, as: UInt8.self)
                (out + position + 5).copyMemory(from: source.baseAddress! + labelAt + 1, byteCount: Int(length))
                position += 5 + Int(length)
                switch form {
                case .none: break
                case .same, .selfOnly:
                    Self.storeAnswer(selfAnswer, width: answerWidth, at: out + position)
                    position += answerWidth
                case .both:
                    Self.storeAnswer(selfAnswer, width: answerWidth, at: out + position)
                    Self.storeAnswer(belowAnswer, width: answerWidth, at: out + position + answerWidth)
                    position += 2 * answerWidth
                }
            }
            precondition(position == total, "the record table was sized for its records")
        }
        PageRelease.release(&effectiveBelow)
        PageRelease.release(&allowBelow)
        PageRelease.release(&renumber)
        PageRelease.release(&selfAnswers)
        PageRelease.release(&belowAnswers)
        Self.release(&records, sole: sole)
        Self.release(&parents, sole: sole)
        Self.release(&ownSelf, sole: sole)
        Self.release(&ownBelow, sole: sole)
        Self.release(&ownAllow, sole: sole)
        let matcher = DomainMatcher(
            recordTable: table, nodeHashes: hashes, nodeOffsets: publishedOffsets, entrySets: published,
            ruleCount: ruleCount, answerWidth: answerWidth
        )
        Self.release(&hashes, sole: sole)
        Self.release(&nodeOffsets, sole: sole)
        PageRelease.release(&publishedOffsets)
        return matcher
    }

    /// Which answers a record stores (`DomainMatcher`'s layout). `selfAnswer` and `belowAnswer`
    /// carry the allowed bit in bit 31.
    private static func form(self selfAnswer: UInt32, below belowAnswer: UInt32) -> DomainMatcher.AnswerForm {
        selfAnswer == 0 && belowAnswer == 0 ? .none
            : selfAnswer == belowAnswer ? .same
            : belowAnswer == 0 ? .selfOnly
            : .both
    }

    private static func storedAnswerCount(_ form: DomainMatcher.AnswerForm) -> Int {
        switch form {
        case .none: 0
        case .same, .selfOnly: 1
        case .both: 2
        }
    }

    /// One answer in `width` bytes, little-endian, its allowed bit moved to the top bit of that width.
    private static func storeAnswer(_ answer: UInt32, width: Int, at place: UnsafeMutableRawPointer) {
        let id = answer & ~DomainMatcher.allowBit
        let allowed = answer & DomainMatcher.allowBit != 0
        if width == 2 {
            place.storeBytes(of: (UInt16(id) | (allowed ? 1 << 15 : 0)).littleEndian, as: UInt16.self)
        } else {
            place.storeBytes(of: answer.littleEndian, as: UInt32.self)
        }
    }

    // MARK: trie

    private func withBytes(of name: DomainName, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        var text = name.text
        text.withUTF8 { body($0) }
    }

    /// The node for `name`, created with its missing ancestors: a batch of one, so a single name
    /// and a list's names are split and hashed by the same walk (`hashBatch`). Nil for an empty
    /// name, one of dots only, or one with a label longer than 63 bytes.
    private mutating func insert(_ name: UnsafeBufferPointer<UInt8>) -> UInt32? {
        guard let base = name.baseAddress, !name.isEmpty else { return nil }
        withUnsafePointer(to: UInt32(name.count)) { end in hashBatch(base, UnsafeBufferPointer(start: end, count: 1), 0..<1) }
        return batchNode(firstLabel: 0, labels: Int(batch.labelCounts[0]), base: base)
    }

    /// The node of a name `hashBatch` split into `labels` labels from `firstLabel` on (top-level
    /// label first), created with its missing ancestors. Nil for a name not stored (no label: dots
    /// only, or a label over 63 bytes, which no DNS name has, RFC 1035 §2.3.4, and a record's
    /// length field cannot hold). Parents are known by their record offset while walking down;
    /// the node index is read from the last record only.
    private mutating func batchNode(firstLabel: Int, labels: Int, base: UnsafePointer<UInt8>) -> UInt32? {
        guard labels > 0 else { return nil }
        var parent = DomainMatcher.rootParent
        for level in firstLabel..<(firstLabel + labels) {
            let span = batch.spans[level]
            parent = child(of: parent, hash: batch.hashes[level], label: base + Int(span.start), count: Int(span.count))
        }
        return readUInt32(at: Int(parent) + Self.nodeField)
    }

    /// The record offset of `parent`'s child labelled `label`, created if missing.
    private mutating func child(of parent: UInt32, hash: UInt64, label: UnsafePointer<UInt8>, count: Int) -> UInt32 {
        let tag = hash & 0xFFFF_FFFF_0000_0000
        let mask = table.count - 1
        var slot = Int(truncatingIfNeeded: hash) & mask
        while true {
            let value = table[slot]
            if value == 0 { break }
            if value & 0xFFFF_FFFF_0000_0000 == tag {
                let offset = UInt32(truncatingIfNeeded: value) &- 1
                if recordMatches(offset, parent: parent, label: label, count: count) { return offset }
            }
            slot = (slot &+ 1) & mask
        }
        let node = UInt32(parents.count)
        let offset = UInt32(records.count)
        precondition(records.count + Self.labelField + count < Int(UInt32.max), "the builder's records are limited to 4 GiB")
        parents.append(parent == DomainMatcher.rootParent ? DomainMatcher.rootParent : readUInt32(at: Int(parent) + Self.nodeField))
        nodeOffsets.append(offset)
        hashes.append(hash)
        // The record is put together on the stack and appended in one copy. Lowercased here too,
        // so that a caller's uppercase slip cannot store an unmatchable label.
        withUnsafeTemporaryAllocation(byteCount: Self.labelField + count, alignment: 1) { record in
            record.storeBytes(of: parent, toByteOffset: 0, as: UInt32.self)
            record.storeBytes(of: node, toByteOffset: Self.nodeField, as: UInt32.self)
            record[Self.lengthField] = UInt8(count)
            for index in 0..<count { record[Self.labelField + index] = DomainNormalizer.lowercased(label[index]) }
            records.append(contentsOf: UnsafeRawBufferPointer(record))
        }
        ownSelf.append(0)
        ownBelow.append(0)
        ownAllow.append(0)
        table[slot] = tag | (UInt64(offset) + 1)
        if parents.count * 2 > table.count { rehash(capacity: table.count * 2) }
        return offset
    }

    private func readUInt32(at offset: Int) -> UInt32 {
        records.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: UInt32.self) }
    }

    /// Whether the record at `offset` is `parent`'s child labelled `label` (any case).
    private func recordMatches(_ offset: UInt32, parent: UInt32, label: UnsafePointer<UInt8>, count: Int) -> Bool {
        records.withUnsafeBytes { bytes in
            let start = Int(offset)
            guard bytes.loadUnaligned(fromByteOffset: start, as: UInt32.self) == parent,
                  Int(bytes[start + Self.lengthField]) == count else { return false }
            for index in 0..<count where bytes[start + Self.labelField + index] != DomainNormalizer.lowercased(label[index]) {
                return false
            }
            return true
        }
    }

    private mutating func rehash(capacity: Int) {
        var bigger = [UInt64](repeating: 0, count: capacity)
        let mask = capacity - 1
        for (index, (hash, offset)) in zip(hashes, nodeOffsets).enumerated() {
            // A rehash moves every node made so far: it yields on the way.
            if index & 1023 == 0 { CooperativeYield.point() }
            var slot = Int(truncatingIfNeeded: hash) & mask
            while bigger[slot] != 0 { slot = (slot &+ 1) & mask }
            bigger[slot] = (hash & 0xFFFF_FFFF_0000_0000) | (UInt64(offset) + 1)
        }
        swap(&table, &bigger)
        Self.release(&bigger, sole: isKnownUniquelyReferenced(&soleCopy))
    }
}
