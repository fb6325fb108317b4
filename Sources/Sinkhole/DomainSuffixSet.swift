import DNSWire

/// A set of domains that matches a name and all its subdomains (SPEC §1), looked up without
/// allocating: every label-boundary suffix of the query name is probed as a slice of its bytes.
///
/// This is the sinkhole's own small matcher for canary and DoH-endpoint lists; the blocklists of
/// entries go through the DomainLists matcher behind `QueryPolicy`.
public struct DomainSuffixSet: Sendable {
    /// Lowercased uncompressed wire names. `ArraySlice` hashes and compares by content, so a slice
    /// of a query name finds an element stored from another array.
    private var names: Set<ArraySlice<UInt8>>

    public init() { names = [] }

    public init(_ domains: some Sequence<String>) throws(DNSWireError) {
        names = []
        for domain in domains { try insert(domain) }
    }

    public var count: Int { names.count }

    public mutating func insert(_ domain: String) throws(DNSWireError) {
        let name = try DNSName(domain).lowercased
        names.insert(name.wireBytes[...])
    }

    public mutating func insert(lowercasedWire: [UInt8]) {
        names.insert(lowercasedWire[...])
    }

    /// True when `lowercasedName` (wire form, lowercased) or one of its ancestors is in the set.
    /// The root is never matched, so an empty entry cannot block everything.
    public func contains(lowercasedName: [UInt8]) -> Bool {
        guard !names.isEmpty else { return false }
        var position = 0
        while position < lowercasedName.count, lowercasedName[position] != 0 {
            if containsExactly(lowercasedName[position...]) { return true }
            position += 1 + Int(lowercasedName[position])
        }
        return false
    }

    /// Exact membership of one name (no ancestors).
    public func containsExactly(_ lowercasedName: ArraySlice<UInt8>) -> Bool {
        names.contains(lowercasedName)
    }
}

/// One failed line of a list file, for the error report of a reload (ARCHITECTURE.md principle 5).
public struct ListLineError: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var line: Int
    public var text: String
    public var reason: String
    public var description: String { "\(path):\(line): '\(text)' is not a domain name (\(reason))" }
}

/// Reading a plain list file failed as a whole.
public enum ListFileError: Error, Sendable, CustomStringConvertible {
    case unreadable(path: String, reason: String)
    case tooManyBadLines(path: String, bad: Int, firstErrors: [ListLineError])

    public var description: String {
        switch self {
        case .unreadable(let path, let reason):
            "cannot read the list \(path): \(reason); check that the file exists and is readable"
        case .tooManyBadLines(let path, let bad, let errors):
            "the list \(path) has \(bad) lines that are not domain names, more than allowed; first: "
                + errors.prefix(3).map(\.description).joined(separator: "; ")
        }
    }
}

/// A plain list file: one domain per line, `#` comments, blank lines ignored. A few bad lines are
/// tolerated and reported (blocky's rule, ARCHITECTURE.md principle 5).
public struct PlainDomainList: Sendable {
    public var domains: [String]
    public var badLines: [ListLineError]

    /// More bad lines than this share (or than 100 in a small file) fails the whole file.
    static let badLineBudget = 0.01

    public static func load(path: String) throws(ListFileError) -> PlainDomainList {
        let data: [UInt8]
        do {
            data = try FileBytes.read(path: path)
        } catch {
            throw .unreadable(path: path, reason: error.description)
        }
        var list = PlainDomainList(domains: [], badLines: [])
        var lineNumber = 0
        for rawLine in data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            lineNumber += 1
            var line = Substring(decoding: rawLine, as: UTF8.self)
            if let hash = line.firstIndex(of: "#") { line = line[..<hash] }
            let text = line.trimmingWhitespace()
            if text.isEmpty { continue }
            do {
                _ = try DNSName(String(text))
                list.domains.append(String(text).lowercased())
            } catch {
                list.badLines.append(ListLineError(path: path, line: lineNumber, text: String(text.prefix(80)), reason: error.description))
            }
        }
        let allowed = max(100, Int(Double(list.domains.count) * badLineBudget))
        guard list.badLines.count <= allowed else {
            throw .tooManyBadLines(path: path, bad: list.badLines.count, firstErrors: list.badLines)
        }
        return list
    }
}

extension Substring {
    func trimmingWhitespace() -> Substring {
        var result = self
        while let first = result.first, first == " " || first == "\t" || first == "\r" { result = result.dropFirst() }
        while let last = result.last, last == " " || last == "\t" || last == "\r" { result = result.dropLast() }
        return result
    }
}
