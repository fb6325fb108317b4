/// The categories of the curated catalog (SPEC §1: `scrolloff block social` blocks a whole
/// category). A list naming any other category is refused, so a typo cannot hide a service from
/// `block <category>`.
public enum ServiceCategory: String, Sendable, CaseIterable, Comparable, CustomStringConvertible {
    case social, video, streaming, music, gaming, messaging, shopping, news, forums, dating, ai, productivity

    public static func < (a: ServiceCategory, b: ServiceCategory) -> Bool { a.rawValue < b.rawValue }
    public var description: String { rawValue }
}

/// One curated service: `blocklists/services/<id>.list`.
public struct CatalogService: Sendable, Identifiable, Equatable {
    /// What `scrolloff block <id>` takes; equals the file name without `.list`.
    public var id: String
    /// The display name, such as "X (Twitter)".
    public var name: String
    public var category: ServiceCategory
    /// Where the list comes from, with its licence notice when it has one.
    public var source: String
    /// What the list cannot do, such as "YouTube Shorts cannot be blocked apart from YouTube".
    public var note: String?
    public var license: String?
    /// The domains, each blocking itself and its subdomains (SPEC §1).
    public var rules: RuleList
    /// The file the service was read from, for messages.
    public var file: String

    public var domains: [DomainName] { rules.map(\.name) }
}

/// One always-allow list: `blocklists/allow/<id>.list` (SPEC §1). The optional encrypted-DNS list
/// (`blocklists/doh/`, SPEC §9) has the same shape and loads with `Catalog.loadNamedList`.
public struct AllowSet: Sendable, Identifiable, Equatable {
    /// The file name without `.list`.
    public var id: String
    public var name: String
    /// Why these names are listed: for an allow list, why they must never be blocked.
    public var purpose: String
    public var note: String?
    public var source: String?
    public var license: String?
    public var rules: RuleList
    public var file: String

    public var domains: [DomainName] { rules.map(\.name) }
}

/// Why the catalog could not be loaded. Every case names the file, and the line when there is one.
public enum CatalogError: Error, Equatable, Sendable, CustomStringConvertible {
    case unreadable(path: String, errno: Int32)
    case missingHeader(file: String, key: String)
    case duplicateHeader(file: String, line: Int, key: String)
    case unknownHeader(file: String, line: Int, key: String, known: [String])
    case emptyHeader(file: String, line: Int, key: String)
    case idMismatch(file: String, line: Int, id: String, expected: String)
    case unknownCategory(file: String, line: Int, category: String)
    case badLine(file: String, line: Int, reason: BadLineReason)
    case notADomainLine(file: String, line: Int, text: String)
    case noDomains(file: String)
    case duplicateService(id: String, files: [String])

    public var description: String {
        switch self {
        case .unreadable(let path, let errno):
            "cannot read \(path) (errno \(errno)); check that the catalog folder exists and is readable"
        case .missingHeader(let file, let key):
            "\(file): the header has no '# \(key): …' line; add it at the top of the file"
        case .duplicateHeader(let file, let line, let key):
            "\(file):\(line): '\(key)' is set twice in the header; keep one"
        case .unknownHeader(let file, let line, let key, let known):
            "\(file):\(line): unknown header '\(key)'; the header takes \(known.joined(separator: ", "))"
        case .emptyHeader(let file, let line, let key):
            "\(file):\(line): the header '\(key)' has no value"
        case .idMismatch(let file, let line, let id, let expected):
            "\(file):\(line): the id '\(id)' differs from the file name; use '\(expected)' or rename the file"
        case .unknownCategory(let file, let line, let category):
            "\(file):\(line): unknown category '\(category)'; use one of "
                + ServiceCategory.allCases.map(\.rawValue).joined(separator: ", ")
        case .badLine(let file, let line, let reason):
            "\(file):\(line): \(reason)"
        case .notADomainLine(let file, let line, let text):
            "\(file):\(line): '\(text)' is not a plain domain; catalog lists hold one domain per line"
        case .noDomains(let file):
            "\(file): the list has a header but no domain"
        case .duplicateService(let id, let files):
            "the service id '\(id)' is used by \(files.joined(separator: " and ")); ids must be unique"
        }
    }
}
