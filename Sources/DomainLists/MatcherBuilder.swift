#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Collects rules and builds a `DomainMatcher`. Runs off the hot path; the helper
/// publishes the result whole in its `EnforcementBox`.
///
/// Build cost is linear in the labels added: each label is one probe in a growing hash table,
/// then one pass over the nodes in creation order (parents always come before their children)
/// folds each ancestor's rules into its descendants' answers.
public struct MatcherBuilder {
    /// Nodes made so far; a node's index is its place in creation order.
    private var nodeCount = 0
    /// One record per node, in creation order: the parent's node index (UInt32, `rootParent` at
    /// the top), the node's index (UInt32), the label length, the lowercase label. What a probe
    /// verifies lies in one place, so a probe that finds a node costs one cache miss, not one per
    /// array (measured: three dependent misses per label were most of a 1,000,000-name build).
    ///
    /// Nothing else is kept per node beyond the answers below: a node's parent is in its record, its
    /// record's offset follows from walking the records in order (each is `labelField` + length
    /// bytes), and its `SuffixHash` from its labels (for the rare rehash; `build`
    /// makes every node's from its parent's as it writes the matcher's records). Three arrays for
    /// those were 16 bytes a name at the build's peak, 76 MiB at 5,000,000 names
    /// (docs/benchmarks.md, "Then: the builder's per-node arrays").
    private var records: [UInt8] = []
    private var ownSelf: [UInt32] = []
    private var ownBelow: [UInt32] = []
    /// Bit 0: allow the name itself; bit 1: allow the names under it.
    private var ownAllow: [UInt8] = []
    /// Slot = record offset + 1 in the bits of the table's `indexMask`, a tag from the edge hash's
    /// high 32 bits above them; 0 is empty. 32 bits, not 64: the table is the builder's largest
    /// array (64 MiB of the 305 MiB peak at 5,000,000 names), and the offsets of a list's records
    /// take 27 bits there, which leaves a tag that rejects 31 of 32 wrong slots. Shared by copies
    /// of the builder until one of them adds a name (`ownTable`).
    private var table = ProbeTable(count: 1024, indexMask: ProbeTable.indexMask(forRecordBytes: 1 << 16))
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

    /// `build`'s allowed bits, beside a node's own (bit 0: the name itself, bit 1: names below):
    /// the effective ones, inherited from the ancestors.
    private static let allowsSelf: UInt8 = 4
    private static let allowsBelow: UInt8 = 8

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

    /// Adds a parsed list the caller hands over, like `add(_:entry:)`. When the list holds its
    /// storage alone (no other copy shares it), the pages of the names, ends and kinds already read
    /// go back to the kernel in steps as the names go in, and the rest when the add returns, so a
    /// list's parsed copy and the builder's arrays are not both whole at the build's peak (SPEC §9.6;
    /// docs/benchmarks.md "List memory": ~25 B a line on top of the builder's own). A shared list is only read.
    public mutating func add(taking rules: consuming RuleList, entry: EntryIndex) {
        let alone = rules.holdsStorageAlone()
        addAll(rules, entry: entry, allowingAll: false, releasingAsRead: alone)
    }

    /// Tests: runs after each batch of `add(taking:entry:)`'s names, with how many names are in.
    var afterBatch: ((Int) -> Void)?
    /// Tests: runs as `build` begins, with whether this builder holds its arrays alone (no copy of
    /// it shares them): only then does `build` hand them back as it reads them.
    var startsBuild: ((Bool) -> Void)?

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
    /// misses overlap, and the inserts find what they read in cache (measured: a 1,000,000-name
    /// build was mostly misses taken one after the other).
    ///
    /// `releasingAsRead`: the caller holds `rules` alone and drops it after this; each array's
    /// pages before what the next batch reads go back as the batches go (`ReadPrefix`).
    private mutating func addAll(_ rules: RuleList, entry: EntryIndex, allowingAll: Bool, releasingAsRead: Bool = false) {
        ownTable()
        reserve(rules: rules.count, nameBytes: rules.nameByteCount)
        rules.withPackedStorage { bytes, ends, kinds in
            guard let base = bytes.baseAddress else { return }
            var readBytes = ReadPrefix(), readEnds = ReadPrefix(), readKinds = ReadPrefix()
            var batchStart = 0
            while batchStart < ends.count {
                // A million-name list is 30,000 batches of ~10 µs: a refresh yields between them (SPEC §9.10).
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
                if releasingAsRead {
                    // The next batch reads from the end of the last name on (`hashBatch` reads the
                    // end offset before its first name); whole pages before that are done with. In
                    // steps of at least `PageRelease.step`, not one call per page.
                    let minimum = PageRelease.step
                    readBytes.discard(bytes, upTo: Int(ends[batchEnd - 1]), atLeast: minimum)
                    readEnds.discard(ends, upTo: batchEnd - 1, atLeast: minimum)
                    readKinds.discard(kinds, upTo: batchEnd, atLeast: minimum)
                }
                afterBatch?(batchEnd)
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
        let table = self.table.base, mask = self.table.count - 1, indexMask = self.table.indexMask
        for hash in batch.hashes[..<batch.count] { sink |= UInt64(table[Int(truncatingIfNeeded: hash) & mask]) }
        records.withUnsafeBufferPointer { records in
            for hash in batch.hashes[..<batch.count] {
                let value = table[Int(truncatingIfNeeded: hash) & mask]
                guard value & ~indexMask == UInt32(truncatingIfNeeded: hash >> 32) & ~indexMask else { continue }
                let offset = Int(value & indexMask) - 1
                if offset >= 0, offset < records.count { sink |= UInt64(records[offset]) }
            }
        }
        warmed ^= sink
    }

    /// Makes room for `rules` more names of `nameBytes` bytes in all, so that the table is not
    /// rehashed and the arrays not copied while they go in. Most names of a list add one node,
    /// so that is the estimate. A list of repeated names (one name three million times: a gzip
    /// bomb under the download cap) reserves more than it uses, but only in address space: the
    /// arrays' spare capacity is never written, and the table's pages are mapped zero pages
    /// until a node lands on them (`ProbeTable`), so what is resident follows the distinct names.
    private mutating func reserve(rules: Int, nameBytes: Int) {
        guard rules > 0 else { return }
        let nodes = nodeCount + rules
        var capacity = table.count
        while capacity * Self.maxLoad.numerator < nodes * Self.maxLoad.denominator { capacity <<= 1 }
        // The records of `rules` more names take at most their bytes and a record head each.
        let recordBytes = records.count + nameBytes + rules * Self.labelField
        let indexMask = max(table.indexMask, ProbeTable.indexMask(forRecordBytes: recordBytes))
        if capacity > table.count || indexMask != table.indexMask { rehash(capacity: capacity, indexMask: indexMask) }
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
        reserve(&ownSelf, nodes)
        reserve(&ownBelow, nodes)
        reserve(&ownAllow, nodes)
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
    ///
    /// `self` is handed on with `consume`: called plainly, the consuming `build(wideAnswers:)` got
    /// a copy while this frame kept the original to the end, so no array was held alone; the
    /// first pass copied the per-node arrays (45 MiB more at 5,000,000 names, `strace`: three
    /// `mmap`s as the pass began) and nothing was handed back as it was read.
    public consuming func build() -> DomainMatcher { (consume self).build(wideAnswers: false) }

    /// `wideAnswers` stores 4-byte answers even when 2 would do, so that tests can run the wide
    /// layout on small rule sets; `build()` never asks for it.
    consuming func build(wideAnswers: Bool) -> DomainMatcher {
        // The probe table and the batch buffers are done with: freed before the matcher's tables
        // are made, so the build's peak holds neither twice. Every large scratch array goes back
        // in steps (`PageRelease`): a 1,000,000-name build's scratch is tens of MB, and freeing it
        // in one call held a woken event loop off the core for milliseconds (SPEC §9.10).
        let sole = isKnownUniquelyReferenced(&soleCopy)
        startsBuild?(sole)
        table = ProbeTable(count: 1, indexMask: table.indexMask)
        batch = Batch()
        let nodeCount = self.nodeCount
        // Effective sets are computed in the builder's interner, then renumbered so that the
        // published table holds only the sets some answer uses.
        var renumber = [UInt32](repeating: UInt32.max, count: interner.sets.count)
        var published: [[EntryIndex]] = [[]]
        renumber[0] = 0
        func publish(_ id: UInt32) {
            // Unions made in this pass add sets to the interner, so the map grows as it goes.
            if Int(id) >= renumber.count {
                renumber.append(contentsOf: repeatElement(UInt32.max, count: Int(id) + 1 - renumber.count))
            }
            if renumber[Int(id)] == UInt32.max {
                renumber[Int(id)] = UInt32(published.count)
                published.append(interner.sets[Int(id)])
            }
        }

        // First pass: every node's effective sets and allowed bits, written over its own ones in
        // place (a node's own values are read only at its turn, before they are replaced), so the
        // pass adds no array: four new ones were 13 bytes a name, 65 MB at 5,000,000 names, at
        // the build's peak. Afterwards `selfSets`/`belowSets` hold interner ids (published ids
        // through `renumber`), `allowBits` bit 2 "the name itself is allowed", bit 3 "names below".
        // A record holds its parent's node index, not its record offset: this pass reads the
        // parent's answers without a read of the parent's record at random (measured: that read
        // was most of a 1,000,000-name build's first pass), and the second pass, which hands the
        // records back as it reads them, never reads a parent's record.
        var selfSets: [UInt32] = [], belowSets: [UInt32] = [], allowBits: [UInt8] = [], records: [UInt8] = []
        swap(&selfSets, &ownSelf)
        swap(&belowSets, &ownBelow)
        swap(&allowBits, &ownAllow)
        swap(&records, &self.records)
        // Read and written through buffer pointers: a closure over the arrays made every read a
        // checked access to a boxed variable (the build's CPU time rose by half).
        records.withUnsafeMutableBytes { records in
         selfSets.withUnsafeMutableBufferPointer { selfSets in
          belowSets.withUnsafeMutableBufferPointer { belowSets in
           allowBits.withUnsafeMutableBufferPointer { allowBits in
            var offset = 0
            for node in 0..<nodeCount {
                // Each pass over the nodes yields on the way (`CooperativeYield`, SPEC §9.10).
                if node & 1023 == 0 { CooperativeYield.point() }
                // Parents are created before their children, so theirs are already final here.
                let parent = records.loadUnaligned(fromByteOffset: offset, as: UInt32.self)
                let isTopLevel = parent == DomainMatcher.rootParent
                let inheritedSet = isTopLevel ? 0 : belowSets[Int(parent)]
                let inheritedAllow = isTopLevel ? false : allowBits[Int(parent)] & Self.allowsBelow != 0
                let selfSet = interner.union(selfSets[node], inheritedSet)
                let belowSet = interner.union(belowSets[node], inheritedSet)
                let own = allowBits[node]
                selfSets[node] = selfSet
                belowSets[node] = belowSet
                allowBits[node] = (inheritedAllow || own & 1 != 0 ? Self.allowsSelf : 0) | (inheritedAllow || own & 2 != 0 ? Self.allowsBelow : 0)
                // Published in the order the answers are met, as they always were: the same ids.
                publish(selfSet)
                publish(belowSet)
                offset += Self.labelField + Int(records[offset + Self.lengthField])
            }
           }
          }
         }
        }
        /// A node's two answers (32-bit, allowed in bit 31).
        @inline(__always)
        func answers(_ node: Int, _ renumber: UnsafeBufferPointer<UInt32>, _ selfSets: UnsafeBufferPointer<UInt32>,
                     _ belowSets: UnsafeBufferPointer<UInt32>, _ allowBits: UnsafeBufferPointer<UInt8>) -> (self: UInt32, below: UInt32) {
            let allowed = allowBits[node]
            return (renumber[Int(selfSets[node])] | (allowed & Self.allowsSelf != 0 ? DomainMatcher.allowBit : 0),
                    renumber[Int(belowSets[node])] | (allowed & Self.allowsBelow != 0 ? DomainMatcher.allowBit : 0))
        }

        // Second pass: the records, with the narrowest answer width that holds every id, written
        // in place into a table sized first (measured: appending field by field was a tenth of a
        // 1,000,000-name build).
        let answerWidth = !wideAnswers && UInt32(published.count - 1) <= DomainMatcher.maxNarrowSetID ? 2 : 4
        var total = 0
        records.withUnsafeBufferPointer { records in
         renumber.withUnsafeBufferPointer { renumber in
          selfSets.withUnsafeBufferPointer { selfSets in
           belowSets.withUnsafeBufferPointer { belowSets in
            allowBits.withUnsafeBufferPointer { allowBits in
            var offset = 0
            for node in 0..<nodeCount {
                if node & 4095 == 0 { CooperativeYield.point() }  // a few reads per node: points further apart
                let (selfAnswer, belowAnswer) = answers(node, renumber, selfSets, belowSets, allowBits)
                let form = Self.form(self: selfAnswer, below: belowAnswer)
                let length = Int(records[offset + Self.lengthField])
                total += DomainMatcher.lengthFieldOffset + 1 + length + Self.storedAnswerCount(form) * answerWidth
                offset += Self.labelField + length
            }
            }
           }
          }
         }
        }
        // Offsets are 32-bit and UInt32.max means "no parent"; no real list comes near 4 GiB.
        precondition(total < Int(UInt32.max), "the record table is limited to 4 GiB")
        // Each node's offset in the matcher's records, read at random (a child's parent). Zero
        // pages from the allocator, resident as the pass writes them rather than all at once.
        var publishedOffsets = PagedBuffer<UInt32>(zeroed: nodeCount)
        let offsets = publishedOffsets.base
        // Each node's `SuffixHash`, its parent's extended by its label, for the matcher's slots:
        // made here, where the parent's is one read away, rather than kept through the whole
        // build (8 B a name at the builder's peak) or made again by the matcher from its records
        // (a walk up the parents for most nodes: a third more CPU for a 1,000,000-name build).
        var nodeHashes = PagedBuffer<UInt64>(zeroed: nodeCount)
        let hashes = nodeHashes.base
        // Written straight into the matcher's own table (zero-filled, spare bytes included).
        let table = TableMemory.allocate(UInt8.self, count: total + DomainMatcher.spareRecordBytes)
        let out = UnsafeMutableRawPointer(table.base)
        // This pass reads the builder's records and per-node arrays in order, each element once
        // (`publishedOffsets` is the only one read at random): when this builder is their only
        // holder, what it has read goes back to the kernel as it goes (`ReadPrefix`), so the
        // matcher's records grow while the builder's shrink instead of both being whole at once.
        records.withUnsafeBufferPointer { source in
            selfSets.withUnsafeBufferPointer { selfSetValues in
             belowSets.withUnsafeBufferPointer { belowSetValues in
              allowBits.withUnsafeBufferPointer { allowBitValues in
               renumber.withUnsafeBufferPointer { renumber in
            var read = [ReadPrefix](repeating: ReadPrefix(), count: 4)
            func handBack(upTo node: Int, recordBytes: Int) {
                guard sole else { return }
                read[0].discard(source, upTo: recordBytes)
                read[1].discard(selfSetValues, upTo: node)
                read[2].discard(belowSetValues, upTo: node)
                read[3].discard(allowBitValues, upTo: node)
            }
            var position = 0
            var offset = 0
            for node in 0..<nodeCount {
                if node & 1023 == 0 {
                    CooperativeYield.point()
                    if node & 32767 == 0, node > 0 { handBack(upTo: node, recordBytes: offset) }
                }
                // The parent's node index.
                let parent = UnsafeRawPointer(source.baseAddress!).loadUnaligned(fromByteOffset: offset, as: UInt32.self)
                offsets![node] = UInt32(position)
                let isTopLevel = parent == DomainMatcher.rootParent
                let parentOffset = isTopLevel ? DomainMatcher.rootParent : offsets![Int(parent)]
                out.storeBytes(of: parentOffset, toByteOffset: position, as: UInt32.self)
                let labelAt = offset + Self.lengthField
                let length = source[labelAt]
                precondition(length <= DomainMatcher.labelLengthMask, "labels are at most 63 bytes (RFC 1035 §2.3.4)")
                let (selfAnswer, belowAnswer) = answers(node, renumber, selfSetValues, belowSetValues, allowBitValues)
                let form = Self.form(self: selfAnswer, below: belowAnswer)
                out.storeBytes(of: length | form.rawValue << 6, toByteOffset: position + 4, as: UInt8.self)
                (out + position + 5).copyMemory(from: source.baseAddress! + labelAt + 1, byteCount: Int(length))
                hashes![node] = SuffixHash.extend(isTopLevel ? SuffixHash.root : hashes![Int(parent)],
                                                  label: source.baseAddress! + labelAt + 1, count: Int(length))
                position += 5 + Int(length)
                offset += Self.labelField + Int(length)
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
              }
             }
            }
        }
        // Swapped out of this builder's arrays: shared with a copy of it unless the first pass
        // wrote to them (every node does), so released like the builder's own.
        Self.release(&selfSets, sole: sole)
        Self.release(&belowSets, sole: sole)
        Self.release(&allowBits, sole: sole)
        PageRelease.release(&renumber)
        Self.release(&records, sole: sole)
        // Gone before the matcher's slots are made, in steps (`PagedBuffer`): the matcher finds
        // each record's offset by walking its records.
        publishedOffsets = PagedBuffer()
        let matcher = DomainMatcher(
            recordTable: table, nodeHashes: nodeHashes.values, entrySets: published, ruleCount: ruleCount, answerWidth: answerWidth)
        nodeHashes = PagedBuffer()
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
        ownTable()
        withUnsafePointer(to: UInt32(name.count)) { end in hashBatch(base, UnsafeBufferPointer(start: end, count: 1), 0..<1) }
        return batchNode(firstLabel: 0, labels: Int(batch.labelCounts[0]), base: base)
    }

    /// The node of a name `hashBatch` split into `labels` labels from `firstLabel` on (top-level
    /// label first), created with its missing ancestors. Nil for a name not stored (no label: dots
    /// only, or a label over 63 bytes, which no DNS name has, RFC 1035 §2.3.4, and a record's
    /// length field cannot hold). Each level's node index is read from the record just found (in
    /// cache: the probe has verified it).
    private mutating func batchNode(firstLabel: Int, labels: Int, base: UnsafePointer<UInt8>) -> UInt32? {
        guard labels > 0 else { return nil }
        var parent = DomainMatcher.rootParent
        for level in firstLabel..<(firstLabel + labels) {
            let span = batch.spans[level]
            let offset = child(of: parent, hash: batch.hashes[level], label: base + Int(span.start), count: Int(span.count))
            parent = readUInt32(at: Int(offset) + Self.nodeField)
        }
        return parent
    }

    /// The record offset of the child labelled `label` of node `parent` (a node index), created if missing.
    private mutating func child(of parent: UInt32, hash: UInt64, label: UnsafePointer<UInt8>, count: Int) -> UInt32 {
        // A record added here must fit the table's offset bits: names added one at a time (no
        // `reserve`) widen them now and then, with a rehash.
        if records.count + 1 >= Int(self.table.indexMask) {
            rehash(capacity: self.table.count, indexMask: ProbeTable.indexMask(forRecordBytes: 2 * (records.count + Self.labelField + count)))
        }
        let indexMask = self.table.indexMask
        let tag = UInt32(truncatingIfNeeded: hash >> 32) & ~indexMask
        let table = self.table.base, mask = self.table.count - 1
        var slot = Int(truncatingIfNeeded: hash) & mask
        while true {
            let value = table[slot]
            if value == 0 { break }
            if value & ~indexMask == tag {
                let offset = (value & indexMask) &- 1
                if recordMatches(offset, parent: parent, label: label, count: count) { return offset }
            }
            slot = (slot &+ 1) & mask
        }
        let node = UInt32(nodeCount)
        let offset = UInt32(records.count)
        precondition(records.count + Self.labelField + count < Int(UInt32.max), "the builder's records are limited to 4 GiB")
        nodeCount += 1
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
        table[slot] = tag | (offset + 1)
        if nodeCount * Self.maxLoad.denominator > self.table.count * Self.maxLoad.numerator {
            rehash(capacity: self.table.count * 2, indexMask: indexMask)
        }
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

    /// Moves every node into a table of `capacity` slots. Each node's hash is made again from its
    /// label and its parent's, in creation order, into an array that lives only for the rehash:
    /// rare, since `reserve` sizes the table for a list before its names go in, so a rehash moves
    /// what earlier lists made (the catalog's few thousand nodes).
    private mutating func rehash(capacity: Int, indexMask: UInt32) {
        let bigger = ProbeTable(count: capacity, indexMask: indexMask)
        let slots = bigger.base, mask = capacity - 1
        let hashes = PagedBuffer<UInt64>(zeroed: nodeCount)
        let hash = hashes.base
        var offset = 0
        records.withUnsafeBytes { records in
            for index in 0..<nodeCount {
                // A rehash moves every node made so far: it yields on the way.
                if index & 1023 == 0 { CooperativeYield.point() }
                let parent = records.loadUnaligned(fromByteOffset: offset, as: UInt32.self)
                let length = Int(records[offset + Self.lengthField])
                let label = records.baseAddress!.assumingMemoryBound(to: UInt8.self) + offset + Self.labelField
                let nodeHash = SuffixHash.extend(parent == DomainMatcher.rootParent ? SuffixHash.root : hash![Int(parent)],
                                                 label: label, count: length)
                hash![index] = nodeHash
                var slot = Int(truncatingIfNeeded: nodeHash) & mask
                while slots[slot] != 0 { slot = (slot &+ 1) & mask }
                slots[slot] = (UInt32(truncatingIfNeeded: nodeHash >> 32) & ~indexMask) | (UInt32(offset) + 1)
                offset += Self.labelField + length
            }
        }
        // Held to here, where the loop that writes through `hash` is done.
        precondition(hashes.count == nodeCount)
        // The smaller table is freed in steps when this builder held it alone (`ProbeTable.deinit`).
        table = bigger
    }

    /// The most the probe table is filled before it doubles: 3/4. Linear probing stays short at
    /// that load (2.5 slots on a hit, 8.5 on a miss, within one or two cache lines of 8 slots),
    /// and a table at 1/2 was the largest array of a large build: at 5,000,000 names 16 Mi slots
    /// (128 MiB) against 8 Mi now, as much as the whole matcher that is built from it.
    private static let maxLoad = (numerator: 3, denominator: 4)

    /// Gives this builder a table of its own before it writes to it, if a copy shares it.
    private mutating func ownTable() {
        if !isKnownUniquelyReferenced(&table) { table = table.copy() }
    }

    /// Bytes of the probe table that are resident (`mincore`): what a build's table costs in memory,
    /// for tests. Its size follows the rules reserved for, its resident pages the names stored.
    var tableResidentBytes: Int { table.residentBytes }
    /// Bytes of the records and the per-node arrays as written, for tests: what the builder holds
    /// for its nodes besides the probe table (spare capacity is never written, so never resident).
    var nodeBytes: Int { records.count + ownSelf.count * 4 + ownBelow.count * 4 + ownAllow.count }
    /// Bytes of the records as written, for tests.
    var recordBytes: Int { records.count }
    /// Bytes the probe table spans (resident or not), for tests.
    var tableBytes: Int { table.count * MemoryLayout<UInt32>.stride }
}

/// How much of an array `build` has read once and for all, and handed back: whole pages only, in
/// the usual steps (`PageRelease`), never past the element it is told is read.
private struct ReadPrefix {
    /// Bytes from the buffer's start whose whole pages are handed back.
    private var done = 0

    /// Hands back the whole pages before element `end`, once they come to at least `minimum`
    /// bytes more than were handed back already.
    mutating func discard<T>(_ buffer: UnsafeBufferPointer<T>, upTo end: Int, atLeast minimum: Int = 1) {
        guard let base = buffer.baseAddress, end > 0 else { return }
        let start = UInt(bitPattern: base)
        let page = UInt(PageRelease.pageSize)
        let limit = Int((start + UInt(min(end, buffer.count) * MemoryLayout<T>.stride)) & ~(page - 1)) - Int(start)
        guard limit > done, limit - done >= minimum else { return }
        PageRelease.discard(UnsafeMutableRawPointer(mutating: base) + done, bytes: limit - done)
        done = limit
    }
}

/// The builder's open-addressing table, in zero pages mapped for it alone (`mmap`), so that a page
/// no node lands on never becomes resident: a table sized for a list's rule count costs memory for
/// the list's distinct names only. Freed in steps (`PageRelease`) when its last holder goes.
final class ProbeTable {
    let base: UnsafeMutablePointer<UInt32>
    let count: Int
    /// The bits of a slot that hold a record offset + 1; the bits above hold the tag.
    let indexMask: UInt32
    private let mappedBytes: Int

    /// The mask whose bits hold any offset + 1 of records up to `bytes` long, or every bit (no
    /// tag) past 2 GiB.
    static func indexMask(forRecordBytes bytes: Int) -> UInt32 {
        var bits = 1
        while bits < 32, 1 << bits <= bytes + 1 { bits += 1 }
        return bits >= 32 ? UInt32.max : UInt32(1 << bits) - 1
    }

    /// `count` zero slots (a power of two).
    init(count: Int, indexMask: UInt32) {
        self.count = count
        self.indexMask = indexMask
        let bytes = max(count, 1) * MemoryLayout<UInt32>.stride
        mappedBytes = (bytes + PageRelease.pageSize - 1) / PageRelease.pageSize * PageRelease.pageSize
        let mapped = mmap(nil, mappedBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        precondition(mapped != nil && mapped != MAP_FAILED, "out of memory for a probe table of \(count) slots")
        // Small pages only, also where the kernel would otherwise back every mapping with huge
        // ones: a node written into a 2 MiB page would make all of it resident.
        _ = madvise(mapped, mappedBytes, MADV_NOHUGEPAGE)
        base = mapped!.bindMemory(to: UInt32.self, capacity: max(count, 1))
    }

    deinit {
        PageRelease.discard(UnsafeMutableRawPointer(base), bytes: mappedBytes)
        munmap(base, mappedBytes)
    }

    /// A table of its own with the same slots.
    func copy() -> ProbeTable {
        let other = ProbeTable(count: count, indexMask: indexMask)
        other.base.update(from: base, count: count)
        return other
    }

    /// Resident bytes of the mapping, from `mincore`.
    var residentBytes: Int {
        let pages = mappedBytes / PageRelease.pageSize
        var vector = [UInt8](repeating: 0, count: pages)
        guard mincore(UnsafeMutableRawPointer(base), mappedBytes, &vector) == 0 else { return mappedBytes }
        return vector.reduce(0) { $0 + Int($1 & 1) } * PageRelease.pageSize
    }
}
