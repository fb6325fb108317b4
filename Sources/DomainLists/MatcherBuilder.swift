/// Collects rules and builds a `DomainMatcher`. Runs off the hot path; the helper
/// publishes the result whole in its `EnforcementBox`.
///
/// Build cost is linear in the labels added: each label is one probe in a growing hash table,
/// then one pass over the nodes in creation order (parents always come before their children)
/// folds each ancestor's rules into its descendants' answers.
public struct MatcherBuilder {
    private var parents: [UInt32] = []
    /// Offset of each node's label (length byte, then bytes) in `arena`.
    private var labelOffsets: [UInt32] = []
    /// `SuffixHash` of each node's whole name, kept to rehash without rereading labels.
    private var hashes: [UInt64] = []
    private var arena: [UInt8] = []
    private var ownSelf: [UInt32] = []
    private var ownBelow: [UInt32] = []
    /// Bit 0: allow the name itself; bit 1: allow the names under it.
    private var ownAllow: [UInt8] = []
    /// Slot = edge-hash high 32 bits << 32 | node + 1; 0 is empty.
    private var table: [UInt64] = Array(repeating: 0, count: 1024)
    private var interner = EntrySetInterner()
    private var ruleCount = 0

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
        for index in rules.indices {
            let scope = rules.scope(at: index)
            let action = rules.action(at: index)
            rules.withName(at: index) { name in
                if action == .allow {
                    allow(normalizedName: name, scope: scope)
                } else {
                    add(normalizedName: name, scope: scope, entry: entry)
                }
            }
        }
    }

    /// Adds every rule of a list as an allow rule, whatever its action (an always-allow list).
    public mutating func allowAll(_ rules: RuleList) {
        for index in rules.indices {
            let scope = rules.scope(at: index)
            rules.withName(at: index) { allow(normalizedName: $0, scope: scope) }
        }
    }

    /// Blocks a name already in normalized form (lowercase ASCII, A-labels, no trailing dot), such as
    /// a `RuleList` name. ASCII case is folded anyway; an empty name is ignored.
    public mutating func add(normalizedName name: UnsafeBufferPointer<UInt8>, scope: MatchScope, entry: EntryIndex) {
        guard let node = insert(name) else { return }
        ruleCount += 1
        let index = Int(node)
        if scope != .subdomainsOnly { ownSelf[index] = interner.adding(entry, to: ownSelf[index]) }
        if scope != .exactName { ownBelow[index] = interner.adding(entry, to: ownBelow[index]) }
    }

    /// Allows a name that is already normalized.
    public mutating func allow(normalizedName name: UnsafeBufferPointer<UInt8>, scope: MatchScope) {
        guard let node = insert(name) else { return }
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

        // Second pass: the records, with the narrowest answer width that holds every id.
        let answerWidth = !wideAnswers && UInt32(published.count - 1) <= DomainMatcher.maxNarrowSetID ? 2 : 4
        var records = RecordWriter(expectedBytes: nodeCount * 8 + arena.count, answerWidth: answerWidth)
        var nodeOffsets = [UInt32](repeating: 0, count: nodeCount)
        for node in 0..<nodeCount {
            let parent = parents[node]
            nodeOffsets[node] = records.byteCount
            records.append(parent == DomainMatcher.rootParent ? DomainMatcher.rootParent : nodeOffsets[Int(parent)])
            let offset = Int(labelOffsets[node])
            records.appendLabel(
                arena[offset...(offset + Int(arena[offset]))], self: selfAnswers[node], below: belowAnswers[node]
            )
        }
        return DomainMatcher(
            records: records.bytes, nodeHashes: hashes, nodeOffsets: nodeOffsets, entrySets: published,
            ruleCount: ruleCount, answerWidth: answerWidth
        )
    }

    /// Writes the record layout documented on `DomainMatcher`.
    private struct RecordWriter {
        private(set) var bytes: [UInt8] = []
        private let answerWidth: Int

        init(expectedBytes: Int, answerWidth: Int) {
            bytes.reserveCapacity(expectedBytes)
            self.answerWidth = answerWidth
        }

        var byteCount: UInt32 {
            // Offsets are 32-bit and UInt32.max means "no parent"; no real list comes near 4 GiB.
            precondition(bytes.count < Int(UInt32.max), "the record table is limited to 4 GiB")
            return UInt32(bytes.count)
        }

        mutating func append(_ value: UInt32) {
            withUnsafeBytes(of: value) { bytes.append(contentsOf: $0) }
        }

        /// The length-and-form byte, the label and the answers the form stores. `selfAnswer` and
        /// `belowAnswer` carry the allowed bit in bit 31.
        mutating func appendLabel(
            _ lengthAndLabel: ArraySlice<UInt8>, self selfAnswer: UInt32, below belowAnswer: UInt32
        ) {
            let form: DomainMatcher.AnswerForm =
                selfAnswer == 0 && belowAnswer == 0 ? .none
                : selfAnswer == belowAnswer ? .same
                : belowAnswer == 0 ? .selfOnly
                : .both
            var label = lengthAndLabel
            let length = label.removeFirst()
            precondition(length <= DomainMatcher.labelLengthMask, "labels are at most 63 bytes (RFC 1035 §2.3.4)")
            bytes.append(length | form.rawValue << 6)
            bytes.append(contentsOf: label)
            switch form {
            case .none: break
            case .same, .selfOnly: appendAnswer(selfAnswer)
            case .both:
                appendAnswer(selfAnswer)
                appendAnswer(belowAnswer)
            }
        }

        /// One answer in `answerWidth` bytes, its allowed bit moved to the top bit of that width.
        private mutating func appendAnswer(_ answer: UInt32) {
            let id = answer & ~DomainMatcher.allowBit
            let allowed = answer & DomainMatcher.allowBit != 0
            if answerWidth == 2 {
                withUnsafeBytes(of: (UInt16(id) | (allowed ? 1 << 15 : 0)).littleEndian) { bytes.append(contentsOf: $0) }
            } else {
                withUnsafeBytes(of: answer.littleEndian) { bytes.append(contentsOf: $0) }
            }
        }
    }

    // MARK: trie

    private func withBytes(of name: DomainName, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        var text = name.text
        text.withUTF8 { body($0) }
    }

    /// The node for `name`, created with its missing ancestors. Nil for an empty name or one with
    /// a label longer than 63 bytes.
    private mutating func insert(_ name: UnsafeBufferPointer<UInt8>) -> UInt32? {
        guard let base = name.baseAddress, !name.isEmpty else { return nil }
        // No DNS name has a label over 63 bytes (RFC 1035 §2.3.4), and a record's length field
        // holds no more: such a name is not stored (no query could match it), nor its parents.
        var run = 0
        for byte in name {
            run = byte == UInt8(ascii: ".") ? 0 : run + 1
            if run > Int(DomainMatcher.labelLengthMask) { return nil }
        }
        var parent = DomainMatcher.rootParent
        var hash = SuffixHash.root
        var end = name.count
        while true {
            var start = end
            while start > 0, base[start - 1] != UInt8(ascii: ".") { start -= 1 }
            // Normalized names have no empty label; skipping one keeps a caller's slip harmless.
            if start < end {
                hash = SuffixHash.extend(hash, label: base + start, count: end - start)
                parent = child(of: parent, hash: hash, label: base + start, count: end - start)
            }
            if start == 0 { break }
            end = start - 1
        }
        return parent == DomainMatcher.rootParent ? nil : parent
    }

    private mutating func child(of parent: UInt32, hash: UInt64, label: UnsafePointer<UInt8>, count: Int) -> UInt32 {
        let tag = hash & 0xFFFF_FFFF_0000_0000
        let mask = table.count - 1
        var slot = Int(truncatingIfNeeded: hash) & mask
        while true {
            let value = table[slot]
            if value == 0 { break }
            if value & 0xFFFF_FFFF_0000_0000 == tag {
                let node = Int(value & 0xFFFF_FFFF) - 1
                if parents[node] == parent, labelEquals(node, label, count) { return UInt32(node) }
            }
            slot = (slot &+ 1) & mask
        }
        let node = UInt32(parents.count)
        parents.append(parent)
        hashes.append(hash)
        labelOffsets.append(UInt32(arena.count))
        arena.append(UInt8(count))
        // Lowercased here too, so that a caller's uppercase slip cannot store an unmatchable label.
        for index in 0..<count { arena.append(DomainNormalizer.lowercased(label[index])) }
        ownSelf.append(0)
        ownBelow.append(0)
        ownAllow.append(0)
        table[slot] = tag | (UInt64(node) + 1)
        if parents.count * 2 > table.count { grow() }
        return node
    }

    private func labelEquals(_ node: Int, _ label: UnsafePointer<UInt8>, _ count: Int) -> Bool {
        let start = Int(labelOffsets[node])
        guard Int(arena[start]) == count else { return false }
        for index in 0..<count where arena[start + 1 + index] != DomainNormalizer.lowercased(label[index]) { return false }
        return true
    }

    private mutating func grow() {
        var bigger = [UInt64](repeating: 0, count: table.count * 2)
        let mask = bigger.count - 1
        for (node, hash) in hashes.enumerated() {
            var slot = Int(truncatingIfNeeded: hash) & mask
            while bigger[slot] != 0 { slot = (slot &+ 1) & mask }
            bigger[slot] = (hash & 0xFFFF_FFFF_0000_0000) | (UInt64(node) + 1)
        }
        table = bigger
    }
}
