import ScrollOffCore

/// One key of `scrolloff.toml`, declared once: where it is, what it holds, its default, what is
/// allowed, what it means and whether a reload applies it. The schema (known keys and "did you
/// mean"), the reader's type and range checks, the embedded defaults, the reload's report and
/// the reference in docs/configuration.md all come from these declarations (`ConfigurationKeys`),
/// so adding a key is one declaration plus the code that uses its value.
public struct Setting: Sendable {
    public let section: SettingSection
    public let key: String
    public let value: SettingValue
    public let defaultValue: SettingDefault
    /// What is accepted, in words, as every message about the key ends: `allowed: 1s to 10s`.
    public let allowed: String
    /// One line for the reference: what the key does.
    public let doc: String
    public let reload: ReloadPart

    public init(
        _ section: SettingSection, _ key: String, _ value: SettingValue, default defaultValue: SettingDefault,
        allowed: String, doc: String, reload: ReloadPart
    ) {
        self.section = section
        self.key = key
        self.value = value
        self.defaultValue = defaultValue
        self.allowed = allowed
        self.doc = doc
        self.reload = reload
    }

    /// `dns.blocked_ttl`: the key as messages and the reload's report name it.
    public var path: String { section.rawValue.isEmpty ? key : "\(section.rawValue).\(key)" }

    /// The same key in another table (a `[[profiles]]` key that `[profile]` has too).
    func also(in other: SettingSection, reload: ReloadPart? = nil) -> Setting {
        Setting(other, key, value, default: defaultValue, allowed: allowed, doc: doc, reload: reload ?? self.reload)
    }
}

/// The tables of the file, as messages name them (array items without their numbers), in the
/// order the sample and the reference list them. A dotted table is a key of its parent.
public enum SettingSection: String, Sendable, CaseIterable {
    case helper, dns, lists
    case listsSource = "lists.source"
    case metrics, firewall, web, digest, notify, store, profile
    case profileKnobs = "profile.knobs"
    case profiles
    case profilesKnobs = "profiles.knobs"
    case allowances

    /// The key that names this table in its parent: `source` for `lists.source`.
    public var key: String { String(rawValue.split(separator: ".").last ?? "") }
    /// The enclosing table's path; "" for the top level.
    public var parent: String { rawValue.split(separator: ".").dropLast().joined(separator: ".") }
    /// `[[lists.source]]` and `[[profiles]]` are arrays of tables.
    public var isArray: Bool { self == .listsSource || self == .profiles || self == .allowances }

    /// One line for the reference, under the table's heading.
    public var doc: String {
        switch self {
        case .helper: "The helper process: its folders, control socket, enforcement mode, log level, threads and control-socket limits."
        case .dns: "The DNS sinkhole: where it listens, whom it asks, how it answers blocked names, its cache and its limits."
        case .lists: "Downloaded lists: the curated catalog, refresh, and who may add which sources."
        case .listsSource: "A list to download and refresh, besides those added with `scrolloff lists add` (one table each)."
        case .metrics: "The optional Prometheus endpoint."
        case .firewall: "The optional nftables table that closes DNS bypasses (docs/firewall.md)."
        case .web: "The household page (docs/household.md)."
        case .digest: "The weekly digest's optional delivery hook."
        case .notify: "The optional hook that tells owners of a new request for time."
        case .store: "Where the state lives: SQLite beside this helper, or a PostgreSQL server the household's helpers share (docs/operations.md)."
        case .profile: "The default profile: every client that no `[[profiles]]` table claims."
        case .profileKnobs: "Each knob of the default profile on its own; left out, the preset decides."
        case .profiles: "A profile for a group of clients; it starts from `[profile]` and replaces what it sets."
        case .profilesKnobs: "Knobs of one `[[profiles]]` table, as in `[profile.knobs]`."
        case .allowances: "A daily allowance (SPEC §4a), as `scrolloff allowance set` gives one: the file's are applied at start and at every reload, and win over a change made since with the CLI or the page (docs/configuration.md \"Daily allowances\")."
        }
    }
}

/// What a key holds, with the bounds the reader enforces.
public enum SettingValue: Sendable {
    case bool
    /// A string the reader checks further (a path, an address, a name).
    case text
    /// One of these words.
    case choice([String])
    case integer(ClosedRange<Int>)
    /// A length of time written with units (`"2h"`, `"90min"`).
    case duration(ClosedRange<Span>)
    /// A TTL: a whole number of seconds, bare (`10`) or with units (`"10s"`).
    case seconds(ClosedRange<Span>)
    /// An array of strings, each checked by the reader.
    case texts
    /// An array of whole numbers within the range.
    case integers(ClosedRange<Int>)
    /// A knob of SPEC §6, checked against its preset by `Knobs.resolve`.
    case knob(Knob)

    /// For the reference's "value" column.
    public var described: String {
        switch self {
        case .bool: "true or false"
        case .text: "string"
        case .choice(let words): words.map { "`\"\($0)\"`" }.joined(separator: ", ")
        case .integer: "whole number"
        case .duration: "length of time"
        case .seconds: "seconds or length of time"
        case .texts: "array of strings"
        case .integers: "array of whole numbers"
        case .knob(let knob):
            switch knob {
            case .perEntryWallets: "true or false"
            case .rolloverDays, .freePeeksPerDay, .paidPeeksPerDay, .includedTokensPerMonth: "whole number"
            default: "length of time"
            }
        }
    }
}

/// The value a key has when the file leaves it out.
public enum SettingDefault: Sendable {
    /// A TOML value, written as the sample writes it; the embedded configuration is read from these.
    case value(String)
    /// Shown in the sample, but worked out when the file leaves the key out (who runs the helper,
    /// another key): `meaning` says how. Not part of the embedded defaults' document.
    case derived(shown: String, meaning: String)
    /// A knob: the profile's preset decides (the sample shows the strict preset's values).
    case preset
    /// No default: a key every table of its kind must have, or may leave out with no effect.
    case none(String)

    /// The TOML text the sample shows, if any.
    public var shown: String? {
        switch self {
        case .value(let text), .derived(let text, _): text
        case .preset, .none: nil
        }
    }
}
