/// The text of the managed section (SPEC §10): one `0.0.0.0 name` and one `:: name` line per
/// blocked name, sorted, so the same rules always give the same bytes and an unchanged state
/// never rewrites the file.
///
/// Built for 100,000 names in well under the 200 ms a rewrite may take (SPEC §10, `bench/hosts.sh`):
/// every name is copied once, lowercased and checked on the way, into one byte pool; the pool's
/// slices are sorted and deduplicated by `memcmp`, and the section is written into one buffer of
/// exactly the right size. No `String` is made per name or per line.
public enum HostsSection {
    /// The null addresses: nothing listens there, so a blocked app fails at once rather than
    /// waiting on a timeout (the same answer as the sinkhole's default `null` blocking mode).
    static let addresses: [[UInt8]] = [Array("0.0.0.0 ".utf8), Array(":: ".utf8)]
    static let comment = "# Managed by scrolloff-dns: edits here are replaced. `scrolloff-dns hosts remove` takes the section out."

    /// The section for `names`, markers included, in `lineBreak`; empty (no section at all) when
    /// no name is left, so a file with nothing blocked is the user's file exactly.
    ///
    /// - Parameters:
    ///   - names: blocked names, any case, with or without a trailing dot; duplicates are fine.
    ///   - excluded: names never written whatever blocks them (the canaries of SPEC §9).
    /// Names a hosts file cannot hold (a wildcard, blanks, `#`, an empty label) are left out: a
    /// hosts line has no escaping, and one bad name must not break the lines around it.
    public static func render(names: some Sequence<String>, excluding excluded: Set<String> = [], lineBreak: HostsLayout.LineBreak = .lf) -> [UInt8] {
        var pool = NamePool()
        for name in names { pool.add(name) }
        return render(pool, excluding: excluded, lineBreak: lineBreak)
    }

    static func render(_ pool: NamePool, excluding excluded: Set<String>, lineBreak: HostsLayout.LineBreak) -> [UInt8] {
        let skip = excluded.compactMap { name -> [UInt8]? in
            var one = NamePool()
            one.add(name)
            return one.count == 1 ? Array(one.bytes) : nil
        }
        let order = pool.sortedUnique(excluding: skip)
        guard !order.isEmpty else { return [] }
        let eol = lineBreak.bytes
        let nameBytes = order.reduce(0) { $0 + Int(pool.lengths[Int($1)]) }
        let fixed = HostsMarker.begin.utf8.count + comment.utf8.count + HostsMarker.end.utf8.count + 3 * eol.count
        let perName = addresses.reduce(0) { $0 + $1.count } + 2 * eol.count
        let size = fixed + nameBytes * 2 + order.count * perName
        return [UInt8](unsafeUninitializedCapacity: size) { out, count in
            var at = 0
            @inline(__always) func put(_ bytes: UnsafeBufferPointer<UInt8>) {
                _ = UnsafeMutableBufferPointer(rebasing: out[at..<(at + bytes.count)]).initialize(from: bytes)
                at += bytes.count
            }
            func put(_ text: String) {
                var text = text
                text.withUTF8 { put($0) }
            }
            eol.withUnsafeBufferPointer { eol in
                put(HostsMarker.begin); put(eol)
                put(comment); put(eol)
                pool.bytes.withUnsafeBufferPointer { all in
                    addresses[0].withUnsafeBufferPointer { v4 in
                        addresses[1].withUnsafeBufferPointer { v6 in
                            for i in order {
                                let name = UnsafeBufferPointer(rebasing: all[Int(pool.starts[Int(i)])..<(Int(pool.starts[Int(i)]) + Int(pool.lengths[Int(i)]))])
                                put(v4); put(name); put(eol)
                                put(v6); put(name); put(eol)
                            }
                        }
                    }
                }
                put(HostsMarker.end); put(eol)
            }
            precondition(at == size, "hosts section size computed wrongly")
            count = at
        }
    }
}

/// Names as one byte pool, each normalised (lowercase, no trailing dot) and checked as it is copied.
struct NamePool {
    var bytes: [UInt8] = []
    var starts: [UInt32] = []
    var lengths: [UInt8] = []
    var count: Int { starts.count }

    /// Copies `name` in lowercase without its trailing dot, or leaves it out when a hosts line
    /// cannot hold it: only letters, digits, `-`, `_` and dots between non-empty labels, at most
    /// 253 bytes, are what glibc's hosts parser reads as one name.
    mutating func add(_ name: String) {
        var name = name
        name.withUTF8 { add($0) }
    }

    mutating func add(_ raw: UnsafeBufferPointer<UInt8>) {
        var length = raw.count
        if length > 0, raw[length - 1] == 0x2E { length -= 1 }
        guard length > 0, length <= 253, raw[0] != 0x2E, raw[length - 1] != 0x2E else { return }
        let start = bytes.count
        var previousDot = false
        for i in 0..<length {
            var b = raw[i]
            switch b {
            case 0x41...0x5A: b |= 0x20; previousDot = false
            case 0x61...0x7A, 0x30...0x39, 0x2D, 0x5F: previousDot = false
            case 0x2E:
                if previousDot { bytes.removeSubrange(start...); return }
                previousDot = true
            default:
                bytes.removeSubrange(start...)
                return
            }
            bytes.append(b)
        }
        starts.append(UInt32(start))
        lengths.append(UInt8(length))
    }

    /// The indices of the names in byte order (ASCII, so the same order as String's), each name
    /// once, leaving out `excluded` (normalised bytes).
    func sortedUnique(excluding excluded: [[UInt8]]) -> [UInt32] {
        guard count > 0 else { return [] }
        // Sorted on the first eight bytes as one big-endian integer, so most comparisons are one
        // integer compare; only names sharing those eight bytes go on to memcmp.
        var keyed: [(prefix: UInt64, index: UInt32)] = []
        keyed.reserveCapacity(count)
        var order: [UInt32] = []
        bytes.withUnsafeBufferPointer { all in
            let base = all.baseAddress!
            starts.withUnsafeBufferPointer { starts in
                lengths.withUnsafeBufferPointer { lengths in
                    for i in 0..<count {
                        var prefix: UInt64 = 0
                        let start = Int(starts[i]), length = Int(lengths[i])
                        for k in 0..<8 { prefix = prefix << 8 | UInt64(k < length ? base[start + k] : 0) }
                        keyed.append((prefix, UInt32(i)))
                    }
                    @inline(__always) func compare(_ a: UInt32, _ b: UInt32) -> Int32 {
                        let la = Int(lengths[Int(a)]), lb = Int(lengths[Int(b)])
                        let c = memcmp(base + Int(starts[Int(a)]), base + Int(starts[Int(b)]), min(la, lb))
                        return c != 0 ? c : Int32(la - lb)
                    }
                    keyed.sort { $0.prefix != $1.prefix ? $0.prefix < $1.prefix : compare($0.index, $1.index) < 0 }
                    order.reserveCapacity(count)
                    var previous: (prefix: UInt64, index: UInt32)?
                    for entry in keyed {
                        if let previous, previous.prefix == entry.prefix, compare(previous.index, entry.index) == 0 { continue }
                        previous = entry
                        let name = entry.index, length = Int(lengths[Int(name)])
                        if excluded.contains(where: { e in
                            e.count == length && e.withUnsafeBufferPointer { memcmp($0.baseAddress!, base + Int(starts[Int(name)]), length) == 0 }
                        }) { continue }
                        order.append(name)
                    }
                }
            }
        }
        return order
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#else
import Darwin
#endif
