import DomainLists
import NIOConcurrencyHelpers
#if canImport(Glibc)
import Glibc
#endif

/// A fetched list's copy on disk as the engine puts it in force: the stored copy and the names a
/// refresh dropped while a rule held the list (SPEC §3), parsed with the budget the store
/// validated the copy with.
public struct ListCopy: Sendable, Equatable {
    public var path: String
    public var heldPath: String?
    public var budget: BadLineBudget

    public init(path: String, heldPath: String? = nil, budget: BadLineBudget) {
        self.path = path
        self.heldPath = heldPath
        self.budget = budget
    }

    /// The copy's rules and the held ones after them, by the parser the store validates with
    /// (`DomainListValidator.parse`). `parsed` is the copy's rules when the caller already has
    /// them (the validator's parse, `ParsedCopies`). A held file that does not parse fails the
    /// whole list, so the caller keeps what it had rather than dropping held names; one that is
    /// gone was released with its lock.
    public func rules(parsed: consuming RuleList? = nil) throws(ListParseError) -> RuleList {
        var rules: RuleList
        // Taken, not copied: the held rules are appended to storage this list holds alone, and the
        // matcher build that follows hands its pages back as it reads them (`ListHandoff`).
        if parsed != nil { rules = parsed.take()! } else { rules = try DomainListValidator.parse(contentsOfFile: path, budget: budget).rules }
        // A held file deleted since (the lock ended and the store let the names go) holds nothing.
        if let heldPath, access(heldPath, F_OK) == 0 {
            rules.append(contentsOf: try DomainListValidator.parse(contentsOfFile: heldPath, budget: budget).rules)
        }
        return rules
    }

    /// The rules of the copy's first whole lines (up to `bytes`), for callers that need a few of
    /// its names rather than all of them (`doctor`'s probe): no bad-line budget, since a part of
    /// a list proves nothing about the whole, and the store validated the whole already.
    public func leadingRules(bytes: Int = 64 << 10) -> RuleList {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return RuleList() }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: bytes)
        let got = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, bytes) }
        guard got > 0 else { return RuleList() }
        // Only whole lines: a line cut short could be a different, shorter name.
        let end = got < bytes ? got : (buffer[0..<got].lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0)
        let options = ListParseOptions(budget: BadLineBudget(perThousandLines: 1000), allowEmpty: true)
        return (try? ListParser.parse(Array(buffer[0..<end]), options: options).rules) ?? RuleList()
    }
}

/// A parsed list on its way from the parse into one matcher build, held only here: the build
/// takes it (`take`) and is then its one owner, so the builder hands its pages back while the
/// names go in (`MatcherBuilder.add(taking:entry:)`) instead of the whole parsed copy living
/// through the build beside the builder's arrays (SPEC §9, memory per name: 25 B a line, all of the
/// add of one name repeated, ~17 B a name at 5,000,000). A build that finds it taken already (a
/// second attempt) reads the list's stored copy again.
public final class ListHandoff: Sendable {
    private let rules: NIOLockedValueBox<RuleList?>

    public init(_ rules: consuming RuleList) { self.rules = NIOLockedValueBox(Optional(rules)) }

    /// The rules, forgotten here; nil once taken.
    public func take() -> RuleList? { rules.withLockedValue { $0.take() } }
}

/// The rules of one matcher entry as the engine keeps them between matcher builds.
///
/// A fetched list is kept as its copy on disk and read again when a build or hosts mode needs
/// its names, not as a second packed copy beside the matcher: that copy cost ~33 bytes per name
/// on top of the matcher's ~39 (SPEC §9: bytes per blocked name ≤ half dnsmasq's). Rebuilds
/// are rare (a custom domain or an always-allowed host changes the entries; rule changes reuse
/// the matcher), so the cost of reading the file again falls where it is cheap.
/// Catalog services and custom domains are small and stay in memory (the catalog's storage is
/// shared, not copied).
public enum ListRules: Sendable {
    /// Rules in memory: a catalog service, a custom domain, or a list handed over as rules.
    case rules(RuleList)
    /// A stored list copy, read again when its rules are needed.
    case copy(ListCopy)
    /// A catalog service's rules and those of a list with the same name, one entry (`ListPart`).
    indirect case union(ListRules, ListRules)

    /// The rules, reading the copy if that is where they are.
    public func load() throws(ListParseError) -> RuleList {
        switch self {
        case .rules(let rules): return rules
        case .copy(let copy): return try copy.rules()
        case .union(let service, let list):
            // The service's names are in memory and always read: a list copy that no longer reads
            // must not take them with it (hosts mode would write neither).
            let first = try service.load()
            guard let second = try? list.load() else { return first }
            return RuleList(Array(first) + Array(second))
        }
    }

    /// A few of the rules without reading a whole stored copy: the copy's first lines.
    public func leading() -> RuleList {
        switch self {
        case .rules(let rules): rules
        case .copy(let copy): copy.leadingRules()
        case .union(let service, _): service.leading()
        }
    }

    public static let empty = ListRules.rules(RuleList())
}
