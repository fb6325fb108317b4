/// A part of the running helper that one or more keys set, and what a reload does when it changes:
/// apply it while serving, or keep the old value until the next restart (settings bound to
/// sockets, threads and folders opened at start). The reload's report names the part, so keys
/// applied together (the cache's five) are named once (`dns.cache`).
///
/// A class so that keys sharing a part share one instance: the part is known by identity.
public final class ReloadPart: Sendable {
    public enum Timing: Sendable, Equatable {
        case appliesAtOnce
        case needsRestart
    }

    /// How the report names the part.
    public enum Naming: Sendable {
        /// The paths of its keys, joined with ", " (one key: its path).
        case keys
        /// The path of its first key: `dns.rate_limit` for the limit and its burst.
        case firstKey
        /// The table's path: `firewall`, `digest`, `lists.source`.
        case section(SettingSection)
        /// A family of keys: `dns.tcp_*`, `dns.cache`.
        case label(String)
    }

    public let timing: Timing
    let naming: Naming
    /// Compares and keeps the part's value in `HelperConfiguration`; nil when the part's owner
    /// decides what changed (the engine for profiles, the lists for their sources).
    public let field: ConfigurationField?

    init(_ timing: Timing, _ field: ConfigurationField?, named naming: Naming) {
        self.timing = timing
        self.field = field
        self.naming = naming
    }

    /// A part applied while serving.
    static func applies<T: Equatable & Sendable>(_ path: WritableKeyPath<HelperConfiguration, T>, named naming: Naming = .keys) -> ReloadPart {
        ReloadPart(.appliesAtOnce, ConfigurationField(path), named: naming)
    }

    /// A part applied while serving, whose owner reports whether it changed.
    static func appliedByOwner(named naming: Naming) -> ReloadPart {
        ReloadPart(.appliesAtOnce, nil, named: naming)
    }

    /// A part taken at start only: a reload reports it and keeps the old value.
    static func restart<T: Equatable & Sendable>(_ path: WritableKeyPath<HelperConfiguration, T>, named naming: Naming = .keys) -> ReloadPart {
        ReloadPart(.needsRestart, ConfigurationField(path), named: naming)
    }

    /// The keys this part is made of, in declaration order.
    public var settings: [Setting] { ConfigurationKeys.all.filter { $0.reload === self } }

    /// As the reload's log line and `ReloadReport` name it.
    public var name: String {
        switch naming {
        case .keys: settings.map(\.path).joined(separator: ", ")
        case .firstKey: settings.first?.path ?? ""
        case .section(let section): section.rawValue
        case .label(let label): label
        }
    }

    /// Whether `next` differs from `old` in this part (false when the owner decides).
    public func changed(_ old: HelperConfiguration, _ next: HelperConfiguration) -> Bool {
        field?.differs(old, next) ?? false
    }
}

/// One field of `HelperConfiguration`, compared and copied without knowing its type.
public struct ConfigurationField: Sendable {
    private let differsBody: @Sendable (HelperConfiguration, HelperConfiguration) -> Bool
    private let keepBody: @Sendable (inout HelperConfiguration, HelperConfiguration) -> Void

    init<T: Equatable & Sendable>(_ path: WritableKeyPath<HelperConfiguration, T>) {
        // Key paths into a value type hold no state; Swift 6.3 does not yet infer them Sendable.
        nonisolated(unsafe) let path = path
        differsBody = { $0[keyPath: path] != $1[keyPath: path] }
        keepBody = { $0[keyPath: path] = $1[keyPath: path] }
    }

    public func differs(_ a: HelperConfiguration, _ b: HelperConfiguration) -> Bool { differsBody(a, b) }

    /// Puts `source`'s value of the field into `target`.
    public func keep(_ target: inout HelperConfiguration, from source: HelperConfiguration) { keepBody(&target, source) }
}
