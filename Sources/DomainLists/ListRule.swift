/// Which names a rule covers, relative to the name it was written with.
public enum MatchScope: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    /// The name and every name under it: `example.com`, `0.0.0.0 example.com`, `||example.com^`.
    /// SPEC §1: blocking a domain blocks all its subdomains.
    case nameAndSubdomains = 0
    /// Only the name itself: `|example.com^` (the adblock start anchor `|` pins the hostname start,
    /// `^` its end, so no subdomain matches; AdGuard Home reads it the same way).
    case exactName = 1
    /// Only names under it, never the name itself: `*.example.com`, `||*.example.com^`.
    case subdomainsOnly = 2

    public var description: String {
        switch self {
        case .nameAndSubdomains: "name and subdomains"
        case .exactName: "exact name"
        case .subdomainsOnly: "subdomains only"
        }
    }
}

/// Whether a rule blocks names or keeps them open. Allow always beats block (SPEC §1).
public enum RuleAction: UInt8, Sendable, CustomStringConvertible {
    case block = 0
    case allow = 1
    public var description: String { self == .block ? "block" : "allow" }
}

/// One rule read from a list.
public struct ListRule: Hashable, Sendable, CustomStringConvertible {
    public var name: DomainName
    public var scope: MatchScope
    public var action: RuleAction

    public init(name: DomainName, scope: MatchScope = .nameAndSubdomains, action: RuleAction = .block) {
        self.name = name
        self.scope = scope
        self.action = action
    }

    public var description: String { "\(action) \(name) (\(scope))" }
}

/// The rules of a list, packed into one byte buffer so a million rules cost a few arrays rather
/// than a million strings. Reading an element builds a `ListRule`; the matcher reads the bytes.
public struct RuleList: RandomAccessCollection, Sendable, Equatable {
    private var bytes: [UInt8] = []
    private var ends: [UInt32] = []
    private var kinds: [UInt8] = []

    public init() {}

    public init(_ rules: some Sequence<ListRule>) {
        for rule in rules { append(rule) }
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { ends.count }

    public subscript(position: Int) -> ListRule {
        let text = withName(at: position) { String(decoding: $0, as: UTF8.self) }
        let kind = kinds[position]
        return ListRule(
            name: DomainName(normalizedText: text),
            scope: MatchScope(rawValue: kind & 0x0F) ?? .nameAndSubdomains,
            action: RuleAction(rawValue: kind >> 4) ?? .block
        )
    }

    public func scope(at position: Int) -> MatchScope { MatchScope(rawValue: kinds[position] & 0x0F) ?? .nameAndSubdomains }
    public func action(at position: Int) -> RuleAction { RuleAction(rawValue: kinds[position] >> 4) ?? .block }

    /// The normalized name bytes of one rule, without copying.
    public func withName<R>(at position: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        let start = position == 0 ? 0 : Int(ends[position - 1])
        let end = Int(ends[position])
        return try bytes.withUnsafeBufferPointer { try body(UnsafeBufferPointer(rebasing: $0[start..<end])) }
    }

    public mutating func append(_ rule: ListRule) {
        append(normalizedName: Array(rule.name.text.utf8), scope: rule.scope, action: rule.action)
    }

    /// Appends a name that has already been through `DomainNormalizer`.
    mutating func append(normalizedName: [UInt8], scope: MatchScope, action: RuleAction) {
        bytes.append(contentsOf: normalizedName)
        ends.append(UInt32(bytes.count))
        kinds.append(scope.rawValue | action.rawValue << 4)
    }

    /// Bytes held by the packed storage, for reports.
    public var storageBytes: Int { bytes.capacity + ends.capacity * 4 + kinds.capacity }
}
