/// The text of the managed section (SPEC §10): one `0.0.0.0 name` and one `:: name` line per
/// blocked name, sorted, so the same rules always give the same bytes and an unchanged state
/// never rewrites the file.
public enum HostsSection {
    /// The null addresses: nothing listens there, so a blocked app fails at once rather than
    /// waiting on a timeout (the same answer as the sinkhole's default `null` blocking mode).
    static let addresses = ["0.0.0.0", "::"]

    /// The section for `names`, markers included, in `lineBreak`; empty (no section at all) when
    /// no name is left, so a file with nothing blocked is the user's file exactly.
    ///
    /// - Parameters:
    ///   - names: blocked names, any case, with or without a trailing dot; duplicates are fine.
    ///   - excluded: names never written whatever blocks them (the canaries of SPEC §9).
    /// Names a hosts file cannot hold (a wildcard, blanks, `#`, an empty label) are left out: a
    /// hosts line has no escaping, and one bad name must not break the lines around it.
    public static func render(names: some Sequence<String>, excluding excluded: Set<String> = [], lineBreak: HostsLayout.LineBreak = .lf) -> [UInt8] {
        var seen = Set<String>()
        for raw in names {
            // Names from the lists are already lowercase: copy only when one is not.
            var name = raw.utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) ? raw.lowercased() : raw
            if name.utf8.last == 0x2E { name.removeLast() }
            guard isWritable(name), !excluded.contains(name) else { continue }
            seen.insert(name)
        }
        guard !seen.isEmpty else { return [] }
        // Every writable name is ASCII, where String's order is byte order (and memcmp-fast).
        let sorted = seen.sorted()
        let eol = lineBreak.bytes
        var out: [UInt8] = []
        out.reserveCapacity(64 + sorted.count * 2 * 24)
        func line(_ text: String) { out.append(contentsOf: text.utf8); out.append(contentsOf: eol) }
        line(HostsMarker.begin)
        line("# Managed by scrolloff-dns: edits here are replaced. `scrolloff-dns hosts remove` takes the section out.")
        for name in sorted {
            for address in addresses {
                out.append(contentsOf: address.utf8)
                out.append(0x20)
                out.append(contentsOf: name.utf8)
                out.append(contentsOf: eol)
            }
        }
        line(HostsMarker.end)
        return out
    }

    /// Letters, digits, `-`, `_` and dots between non-empty labels, at most 253 bytes: what
    /// glibc's hosts parser reads as one name.
    static func isWritable(_ name: String) -> Bool {
        let bytes = name.utf8
        guard !bytes.isEmpty, bytes.count <= 253, bytes.first != 0x2E, bytes.last != 0x2E else { return false }
        var previousDot = false
        for b in bytes {
            switch b {
            case 0x61...0x7A, 0x30...0x39, 0x2D, 0x5F: previousDot = false
            case 0x2E:
                if previousDot { return false }
                previousDot = true
            default: return false
            }
        }
        return true
    }
}
