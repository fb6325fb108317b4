/// The syntax a line was written in. Detected per line, so mixed lists work (`ListParser`).
public enum ListFormat: String, Sendable, CaseIterable, CustomStringConvertible {
    /// One domain per line: `example.com`.
    case plain
    /// hosts file lines: `0.0.0.0 example.com other.example`.
    case hosts
    /// Adblock-style network rules: `||example.com^`, `|example.com^`, `@@||example.com^`.
    case adblock
    /// Wildcards for subdomains: `*.example.com`.
    case wildcard
    public var description: String { rawValue }
}

/// How many bad lines a source may contain before the whole parse is rejected.
///
/// The comparison is exact integer arithmetic over physical lines (comments and blank lines count,
/// as line numbers do): `bad × 1000 ≤ perThousandLines × lines`. The default, 5 per 1,000, lets a
/// 100,000-line list carry 500 typos, while an error page or a binary file served in place of a
/// list fails and keeps the previous copy in force (ARCHITECTURE principle 5).
public struct BadLineBudget: Hashable, Sendable, CustomStringConvertible {
    public var perThousandLines: Int

    public init(perThousandLines: Int) { self.perThousandLines = max(0, perThousandLines) }

    /// 5 bad lines per 1,000 lines.
    public static let `default` = BadLineBudget(perThousandLines: 5)
    /// No bad line at all: for the curated catalog, which ships with the program.
    public static let none = BadLineBudget(perThousandLines: 0)

    /// Whether `badLines` out of `lines` is within the budget.
    public func allows(badLines: Int, of lines: Int) -> Bool {
        badLines.multipliedReportingOverflow(by: 1000).partialValue
            <= perThousandLines.multipliedReportingOverflow(by: lines).partialValue
    }

    /// The largest number of bad lines `lines` may carry.
    public func allowance(for lines: Int) -> Int { perThousandLines * lines / 1000 }

    public var description: String { "\(perThousandLines) per 1,000 lines" }
}

/// Why one line was not used.
public enum BadLineReason: Equatable, Sendable, CustomStringConvertible {
    /// The text where a name belongs is not a domain name.
    case invalidName(String, DomainNameError)
    /// A name with one label, such as `com`, would block a whole top-level domain.
    case singleLabel(String)
    /// An adblock rule with nothing between its anchors, such as `||^`.
    case emptyAdblockRule
    /// A hosts line with an address and no name.
    case addressWithoutName
    /// Words after the name that are neither a comment nor another hosts name.
    case unexpectedText(String)
    /// A line longer than the parser reads, usually a sign that the file is not a list.
    case lineTooLong(bytes: Int)

    public var description: String {
        switch self {
        case .invalidName(let text, let error):
            "'\(text)': \(error)"
        case .singleLabel(let name):
            "'\(name)' has a single label and would block a whole top-level domain; write the full name"
        case .emptyAdblockRule:
            "the adblock rule names no domain; write it as ||example.com^"
        case .addressWithoutName:
            "an IP address with no name after it; lists block names, so write a name (hosts lines: address, then names)"
        case .unexpectedText(let text):
            "unexpected text '\(text)' after the name; put comments after '#'"
        case .lineTooLong(let bytes):
            "the line is \(bytes) bytes long, more than any list line; is this file really a list?"
        }
    }
}

/// A line that was not used, with its 1-based line number.
public struct BadLine: Equatable, Sendable, CustomStringConvertible {
    public var lineNumber: Int
    public var reason: BadLineReason
    public init(lineNumber: Int, reason: BadLineReason) {
        self.lineNumber = lineNumber
        self.reason = reason
    }
    public var description: String { "line \(lineNumber): \(reason)" }
}

/// Lines that were read but yield no rule, by kind. None of them is an error.
public struct SkippedLineCounts: Equatable, Sendable {
    public var blank = 0
    public var comments = 0
    /// Adblock element-hiding rules (`##`, `#@#`, `#?#`, `#$#`): they act in a browser, not in DNS.
    public var cosmetic = 0
    /// Adblock network rules that are not about a whole host (paths, regular expressions, `$badfilter`,
    /// `$dnsrewrite`, `$client`, `$denyallow`, `$ctag`): applying them as host rules would change their meaning.
    public var unsupported = 0
    /// hosts names that describe the machine itself (`localhost`, `broadcasthost`, `ip6-…`,
    /// `0.0.0.0`), which every hosts file carries and no list means to block.
    public var localNames = 0
    /// Rules that were used with their adblock options (`$third-party`, `$important`, …) ignored.
    public var optionsIgnored = 0
    public init() {}
}

/// Lines per detected format.
public struct FormatCounts: Equatable, Sendable {
    public var plain = 0
    public var hosts = 0
    public var adblock = 0
    public var wildcard = 0
    public init() {}

    public subscript(format: ListFormat) -> Int {
        get {
            switch format {
            case .plain: plain
            case .hosts: hosts
            case .adblock: adblock
            case .wildcard: wildcard
            }
        }
        set {
            switch format {
            case .plain: plain = newValue
            case .hosts: hosts = newValue
            case .adblock: adblock = newValue
            case .wildcard: wildcard = newValue
            }
        }
    }

    /// The format most lines use (ties go to the earlier case), or nil when no line held a rule.
    public var dominant: ListFormat? {
        var best: ListFormat?
        for format in ListFormat.allCases where self[format] > 0 {
            if best.map({ self[format] > self[$0] }) ?? true { best = format }
        }
        return best
    }

    /// True when lines of more than one format were found.
    public var isMixed: Bool { ListFormat.allCases.filter { self[$0] > 0 }.count > 1 }
}

/// The result of a parse that stayed within its bad-line budget.
public struct ParsedList: Sendable {
    public var rules: RuleList
    /// Physical lines read, including comments and blank lines.
    public var lineCount: Int
    /// Rule lines per format; `formats.dominant` is the format to report for the source.
    public var formats: FormatCounts
    public var skipped: SkippedLineCounts
    /// Every bad line up to `ListParseOptions.maxReportedBadLines`, in order.
    public var badLines: [BadLine]
    /// All bad lines, including those past the reporting limit.
    public var badLineCount: Int

    /// A one-line summary for `scrolloff lists list`, numbers first.
    public var summary: String {
        let format = formats.dominant.map { formats.isMixed ? "mostly \($0)" : "\($0)" } ?? "no rules"
        var text = "\(rules.countWithRepeats) rules from \(lineCount) lines (\(format))"
        if badLineCount > 0 { text += ", \(badLineCount) lines skipped as unreadable" }
        return text
    }
}

/// Why a list as a whole was rejected. The caller keeps its previous copy in force.
public enum ListParseError: Error, Equatable, Sendable, CustomStringConvertible {
    /// More bad lines than the budget allows.
    case tooManyBadLines(count: Int, lines: Int, budget: BadLineBudget, examples: [BadLine])
    /// Not a single rule in the whole source, which would silently unblock everything it covered.
    case noRules(lines: Int)
    /// The file could not be opened or read.
    case unreadable(path: String, errno: Int32)

    public var description: String {
        switch self {
        case .tooManyBadLines(let count, let lines, let budget, let examples):
            let shown = examples.prefix(3).map(\.description).joined(separator: "; ")
            return "\(count) of \(lines) lines are not valid rules, more than the \(budget) this source may have "
                + "(\(budget.allowance(for: lines)) here), so this copy was not used. First: \(shown)"
        case .noRules(let lines):
            return "the list has \(lines) lines but no rule, so this copy was not used; check that the URL serves a block list"
        case .unreadable(let path, let errno):
            return "cannot read \(path) (errno \(errno)); check that the file exists and is readable"
        }
    }
}

/// Knobs of a parse.
public struct ListParseOptions: Sendable {
    public var budget: BadLineBudget = .default
    /// Bad lines kept with their details; the rest are only counted.
    public var maxReportedBadLines = 100
    /// Whether a source with no rule at all is accepted (a deliberately empty custom list).
    public var allowEmpty = false
    /// Lines longer than this are bad lines; no real list line comes near it.
    public var maxLineLength = 4096

    public init(budget: BadLineBudget = .default, allowEmpty: Bool = false) {
        self.budget = budget
        self.allowEmpty = allowEmpty
    }
}
