/// Reads one line of a list in whichever format it is written and appends its rules.
///
/// Works on the line's bytes in place; only a name that is kept is copied (into `rules`), so a
/// million-line list makes no per-line `String`. Rules for each format:
/// - blank lines, `#` and `!` comments, and `[Adblock Plus 2.0]`-style headers are skipped;
/// - hosts: an IPv4 or IPv6 address, then one or more names, then an optional `#` comment. Names
///   that describe the machine itself (`localhost`, `ip6-allnodes`, `0.0.0.0`, …) are skipped;
/// - adblock: `||name^` (name and subdomains), `|name^` (that exact name), `@@` in front to allow,
///   `||*.name^` (subdomains only), `$options` ignored and counted; element-hiding rules (`##`) and
///   rules that are about URLs rather than hosts are skipped and counted;
/// - wildcard: `*.name` (subdomains only);
/// - plain: a name, optionally followed by a `#` comment.
struct LineClassifier {
    enum Result: Equatable {
        case skipped
        case rules(ListFormat)
        case bad(BadLineReason)
    }

    var rules = RuleList()
    var skipped = SkippedLineCounts()
    private var scratch: [UInt8] = []

    init() { scratch.reserveCapacity(256) }

    mutating func classify(_ raw: UnsafeBufferPointer<UInt8>) -> Result {
        var start = 0
        var end = raw.count
        while end > start, Self.isSpace(raw[end - 1]) { end -= 1 }
        while start < end, Self.isSpace(raw[start]) { start += 1 }
        guard start < end else {
            skipped.blank += 1
            return .skipped
        }
        let line = UnsafeBufferPointer(rebasing: raw[start..<end])
        if let format = simpleRule(line) { return .rules(format) }
        if Self.isCosmetic(line) {
            skipped.cosmetic += 1
            return .skipped
        }
        switch line[0] {
        case UInt8(ascii: "#"), UInt8(ascii: "!"):
            skipped.comments += 1
            return .skipped
        case UInt8(ascii: "[") where line.last == UInt8(ascii: "]"):
            // `[Adblock Plus 2.0]`, `[uBlock Origin]`: the header line of an adblock filter list.
            skipped.comments += 1
            return .skipped
        default:
            break
        }
        if line.count >= 2, line[0] == UInt8(ascii: "@"), line[1] == UInt8(ascii: "@") {
            return adblock(UnsafeBufferPointer(rebasing: line[2...]), action: .allow)
        }
        if line[0] == UInt8(ascii: "|") {
            return adblock(line, action: .block)
        }
        if line[0] == UInt8(ascii: "/") {
            // `/regex/` or a path rule: browser filters with no host to block.
            skipped.unsupported += 1
            return .skipped
        }

        let tokenEnd = Self.tokenEnd(line, from: 0)
        let token = UnsafeBufferPointer(rebasing: line[0..<tokenEnd])
        if Self.isAddress(token) {
            return hosts(line, namesFrom: tokenEnd)
        }
        let restStart = Self.skipSpaces(line, from: tokenEnd)
        if restStart < line.count, line[restStart] != UInt8(ascii: "#") {
            let rest = UnsafeBufferPointer(rebasing: line[restStart...])
            return .bad(.unexpectedText(Self.excerpt(rest)))
        }
        switch addName(token, scope: .nameAndSubdomains, action: .block) {
        case .added: return .rules(Self.hasWildcardPrefix(token) ? .wildcard : .plain)
        case .local: return .skipped
        case .bad(let reason): return .bad(reason)
        }
    }

    // MARK: the common lines

    /// The lines most lists are made of, `name` and `0.0.0.0 name` (or `127.0.0.1 name`), with a
    /// name `RuleList.appendIfSimpleName` takes: appended in one pass, with the format the full
    /// path gives them. Nil, with nothing appended, sends the line down the full path, which
    /// handles every line; this only takes the ones whose outcome it knows to be the same
    /// (the parse of a 1,000,000-name list, SPEC §1).
    private mutating func simpleRule(_ line: UnsafeBufferPointer<UInt8>) -> ListFormat? {
        var nameStart = 0
        var format = ListFormat.plain
        if line.count > 8, line[0] == UInt8(ascii: "0") || line[0] == UInt8(ascii: "1") {
            for address in Self.sinkPrefixes where line.count > address.count && Self.isSpace(line[address.count]) {
                if UnsafeBufferPointer(rebasing: line[..<address.count]).elementsEqual(address) {
                    nameStart = Self.skipSpaces(line, from: address.count)
                    format = .hosts
                    break
                }
            }
        }
        guard nameStart < line.count, rules.appendIfSimpleName(UnsafeBufferPointer(rebasing: line[nameStart...])) else { return nil }
        return format
    }

    /// The addresses of the hosts lines `simpleRule` takes.
    private static let sinkPrefixes = [Array("0.0.0.0".utf8), Array("127.0.0.1".utf8)]

    // MARK: hosts

    private mutating func hosts(_ line: UnsafeBufferPointer<UInt8>, namesFrom start: Int) -> Result {
        var position = Self.skipSpaces(line, from: start)
        var added = 0
        var sawName = false
        var firstBad: BadLineReason?
        while position < line.count, line[position] != UInt8(ascii: "#") {
            let end = Self.tokenEnd(line, from: position)
            let name = UnsafeBufferPointer(rebasing: line[position..<end])
            sawName = true
            if Self.isAddress(name) {
                if Self.isSinkAddress(name) {
                    // `0.0.0.0 0.0.0.0`: boilerplate of popular hosts lists naming the sink address.
                    skipped.localNames += 1
                } else if firstBad == nil {
                    firstBad = .invalidName(Self.excerpt(name), .ipAddress)
                }
            } else {
                switch addName(name, scope: .nameAndSubdomains, action: .block) {
                case .added: added += 1
                case .local: break
                case .bad(let reason): if firstBad == nil { firstBad = reason }
                }
            }
            position = Self.skipSpaces(line, from: end)
        }
        if let firstBad { return .bad(firstBad) }
        if !sawName { return .bad(.addressWithoutName) }
        return added > 0 ? .rules(.hosts) : .skipped
    }

    // MARK: adblock

    /// Options whose meaning would change if the rule were applied to the whole host.
    private static let unsupportedOptions: Set<String> = ["badfilter", "dnsrewrite", "client", "ctag", "denyallow", "dnstype"]

    private mutating func adblock(_ body: UnsafeBufferPointer<UInt8>, action: RuleAction) -> Result {
        var position = 0
        var scope = MatchScope.nameAndSubdomains
        if body.count >= 2, body[0] == UInt8(ascii: "|"), body[1] == UInt8(ascii: "|") {
            position = 2
        } else if body.count >= 1, body[0] == UInt8(ascii: "|") {
            position = 1
            scope = .exactName
        }
        if body.count - position >= 2, body[position] == UInt8(ascii: "*"), body[position + 1] == UInt8(ascii: ".") {
            position += 2
            scope = .subdomainsOnly
        }
        var nameEnd = position
        scan: while nameEnd < body.count {
            switch body[nameEnd] {
            case UInt8(ascii: "^"), UInt8(ascii: "$"), UInt8(ascii: "|"):
                break scan
            case UInt8(ascii: "/"), UInt8(ascii: "*"), UInt8(ascii: ":"), UInt8(ascii: "?"), UInt8(ascii: "="):
                // A path, a pattern or a URL: not a rule about a host.
                skipped.unsupported += 1
                return .skipped
            default:
                nameEnd += 1
            }
        }
        if nameEnd == position { return .bad(.emptyAdblockRule) }

        var rest = nameEnd
        if rest < body.count, body[rest] == UInt8(ascii: "^") { rest += 1 }
        if rest < body.count, body[rest] == UInt8(ascii: "|") { rest += 1 }
        var hasOptions = false
        if rest < body.count {
            guard body[rest] == UInt8(ascii: "$") else {
                skipped.unsupported += 1
                return .skipped
            }
            let options = String(decoding: UnsafeBufferPointer(rebasing: body[(rest + 1)...]), as: UTF8.self)
            for option in options.split(separator: ",") {
                var key = option.prefix { $0 != "=" }.lowercased()
                if key.hasPrefix("~") { key.removeFirst() }
                if Self.unsupportedOptions.contains(key) {
                    skipped.unsupported += 1
                    return .skipped
                }
            }
            hasOptions = !options.isEmpty
        }
        let name = UnsafeBufferPointer(rebasing: body[position..<nameEnd])
        switch addName(name, scope: scope, action: action, wildcardAllowed: false) {
        case .added:
            if hasOptions { skipped.optionsIgnored += 1 }
            return .rules(.adblock)
        case .local:
            return .skipped
        case .bad(let reason):
            return .bad(reason)
        }
    }

    // MARK: names

    /// What became of one name.
    private enum NameOutcome: Equatable {
        case added
        /// A name of the machine itself (`localhost`), counted and set aside.
        case local
        case bad(BadLineReason)
    }

    /// Normalizes `token` and appends it as a rule; `*.name` becomes a subdomains-only rule.
    private mutating func addName(
        _ token: UnsafeBufferPointer<UInt8>, scope: MatchScope, action: RuleAction, wildcardAllowed: Bool = true
    ) -> NameOutcome {
        var name = token
        var scope = scope
        if wildcardAllowed, Self.hasWildcardPrefix(token) {
            name = UnsafeBufferPointer(rebasing: token[2...])
            scope = .subdomainsOnly
        }
        do {
            try DomainNormalizer.normalize(name, into: &scratch)
        } catch {
            return .bad(.invalidName(Self.excerpt(token), error))
        }
        if Self.isLocalName(scratch) {
            skipped.localNames += 1
            return .local
        }
        if !scratch.contains(UInt8(ascii: ".")) {
            return .bad(.singleLabel(String(decoding: scratch, as: UTF8.self)))
        }
        rules.append(normalizedName: scratch, scope: scope, action: action, droppingRepeat: true)
        return .added
    }

    /// Names every hosts file gives the machine itself (Debian's and StevenBlack's headers).
    private static let localNames: Set<[UInt8]> = Set([
        "localhost", "localhost.localdomain", "local", "localdomain", "broadcasthost", "ip6-localhost",
        "ip6-loopback", "ip6-localnet", "ip6-mcastprefix", "ip6-allnodes", "ip6-allrouters", "ip6-allhosts",
    ].map { Array($0.utf8) })

    private static func isLocalName(_ name: [UInt8]) -> Bool {
        // Cheap length guard first: most names are longer than every local name.
        name.count <= 21 && localNames.contains(name)
    }

    // MARK: byte helpers

    @inline(__always)
    static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A || byte == 0x0B || byte == 0x0C
    }

    private static func tokenEnd(_ line: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var end = start
        while end < line.count, !isSpace(line[end]), line[end] != UInt8(ascii: "#") { end += 1 }
        return end
    }

    private static func skipSpaces(_ line: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var position = start
        while position < line.count, isSpace(line[position]) { position += 1 }
        return position
    }

    private static func hasWildcardPrefix(_ token: UnsafeBufferPointer<UInt8>) -> Bool {
        token.count > 2 && token[0] == UInt8(ascii: "*") && token[1] == UInt8(ascii: ".")
    }

    /// An element-hiding rule: `example.com##.ad`, `##.banner`, `###banner-id`, `example.com#@#.ad`,
    /// `#?#`, `#$#`, `#%#`. A line that starts with `##` followed by a space or more `#`
    /// (`## section ##`, `#####`) is a comment, as hosts files write them.
    private static func isCosmetic(_ line: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        while index + 1 < line.count {
            if isSpace(line[index]) { return false }
            if line[index] == UInt8(ascii: "#") {
                switch line[index + 1] {
                case UInt8(ascii: "@"), UInt8(ascii: "?"), UInt8(ascii: "$"), UInt8(ascii: "%"):
                    return index + 2 < line.count && line[index + 2] == UInt8(ascii: "#")
                case UInt8(ascii: "#"):
                    guard index == 0 else { return true }
                    // At the start of the line: `##.ad` and `###id` select; `## text` and `####` comment.
                    guard index + 2 < line.count else { return false }
                    let third = line[index + 2]
                    if third == UInt8(ascii: "#") {
                        return index + 3 < line.count && line[index + 3] != UInt8(ascii: "#") && !isSpace(line[index + 3])
                    }
                    return !isSpace(third)
                default:
                    return false
                }
            }
            index += 1
        }
        return false
    }

    /// The addresses hosts block lists point names at.
    private static func isSinkAddress(_ token: UnsafeBufferPointer<UInt8>) -> Bool {
        ["0.0.0.0", "127.0.0.1", "::", "::1"].contains { token.elementsEqual($0.utf8) }
    }

    /// An IPv4 dotted quad or an IPv6 address (hex digits, colons, an embedded IPv4, a `%zone`).
    static func isAddress(_ token: UnsafeBufferPointer<UInt8>) -> Bool {
        guard !token.isEmpty, token.count <= 64 else { return false }
        var colons = 0
        var hasZone = false
        for byte in token {
            switch byte {
            case UInt8(ascii: ":"): colons += 1
            case UInt8(ascii: "%"): hasZone = true
            default: break
            }
        }
        if colons >= 2 {
            for byte in token {
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"),
                     UInt8(ascii: "A")...UInt8(ascii: "F"), UInt8(ascii: ":"), UInt8(ascii: "."):
                    continue
                default:
                    if !hasZone { return false }
                }
            }
            return true
        }
        return colons == 0 && isIPv4(token)
    }

    private static func isIPv4(_ token: UnsafeBufferPointer<UInt8>) -> Bool {
        var parts = 0
        var value = 0
        var digits = 0
        for index in 0...token.count {
            let byte = index < token.count ? token[index] : UInt8(ascii: ".")
            if byte == UInt8(ascii: ".") {
                guard digits > 0, value <= 255 else { return false }
                parts += 1
                value = 0
                digits = 0
            } else if byte &- UInt8(ascii: "0") < 10 {
                digits += 1
                guard digits <= 3 else { return false }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            } else {
                return false
            }
        }
        return parts == 4
    }

    /// At most 60 characters of a token, for a bad-line report that stays readable.
    static func excerpt(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        let cut = bytes.count > 60 ? UnsafeBufferPointer(rebasing: bytes[..<60]) : bytes
        let text = String(decoding: cut, as: UTF8.self)
        return bytes.count > 60 ? text + "…" : text
    }
}
