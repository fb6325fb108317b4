/// A line of the user's own, outside the managed section.
public struct HostsUserLine: Equatable, Sendable, CustomStringConvertible {
    /// Its line number in the file as Scroll Off writes it (section first), counting from 1.
    public var number: Int
    /// The line as written, without its line break.
    public var text: String
    /// The blocked names it gives an address of its own.
    public var names: [String]

    public init(number: Int, text: String, names: [String]) {
        self.number = number
        self.text = text
        self.names = names
    }

    public var description: String { "line \(number) (`\(text)`)" }
}

extension HostsLayout {
    /// The user's lines outside the section that give one of `blocked` a real address (SPEC §10).
    ///
    /// glibc with `multi on` in /etc/host.conf (Debian's default) returns every line naming a host,
    /// and `getaddrinfo` sorts a routable `1.2.3.4` before `0.0.0.0`, so such a line still opens the
    /// name while the section blocks it. Scroll Off keeps every byte outside its section as it is,
    /// so it cannot take the line out: `doctor` names it instead. A line that points a name at a
    /// null or loopback address (a block of the user's own) opens nothing and is not reported.
    ///
    /// - Parameter firstLine: the number of the first line after the section in the file as
    ///   written (the section's line count + 1), since the section goes first.
    public func linesNaming(_ blocked: Set<String>, firstLine: Int) -> [HostsUserLine] {
        guard !blocked.isEmpty else { return [] }
        var found: [HostsUserLine] = []
        var number = firstLine
        for part in [before, after] {
            for line in part.split(separator: 0x0A, omittingEmptySubsequences: false) {
                defer { number += 1 }
                var content = line
                if let hash = content.firstIndex(of: 0x23) { content = content[..<hash] }
                let fields = content.split(whereSeparator: { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D })
                guard fields.count >= 2, !Self.opensNothing(fields[0]) else { continue }
                let names = fields.dropFirst().map { String(decoding: $0, as: UTF8.self).lowercased() }.filter {
                    blocked.contains($0.hasSuffix(".") ? String($0.dropLast()) : $0)
                }
                guard !names.isEmpty else { continue }
                var text = line
                if text.last == 0x0D { text = text.dropLast() }
                found.append(HostsUserLine(number: number, text: String(decoding: text, as: UTF8.self), names: names))
            }
            // `before` ends with a line break (the section starts a line), so its split ends with an
            // empty piece that is not a line of its own.
            if part.last == 0x0A || part.isEmpty { number -= 1 }
        }
        return found
    }

    /// 0.0.0.0, ::, 127.0.0.0/8 and ::1 (any spelling of the zeros): nothing answers a browser there.
    static func opensNothing(_ address: ArraySlice<UInt8>) -> Bool {
        let text = String(decoding: address, as: UTF8.self)
        if text.hasPrefix("127.") || text == "0.0.0.0" { return true }
        guard text.contains(":") else { return false }
        let digits = text.filter { $0 != ":" && $0 != "0" }
        return digits.isEmpty || digits == "1"
    }
}
