import ScrollOffCore

/// A profile's settings (SPEC §9 per-client profiles, §6 presets, §11 owners).
public struct ProfileSettings: Hashable, Sendable, Codable {
    public var name: String
    /// Client addresses and networks as written (`192.168.1.0/24`, `fd00::/8`); empty = the default profile.
    public var clientCIDRs: [String]
    /// IANA zone of the profile's local days (SPEC §4 midnight, §5 per-day ladder).
    public var timeZoneID: String
    public var preset: Preset
    /// Knobs set on their own (SPEC §6).
    public var overrides: KnobOverrides
    /// Uids allowed to act on this profile through the control socket (SPEC §11).
    public var ownerUIDs: [UInt32]

    public init(name: String, clientCIDRs: [String] = [], timeZoneID: String, preset: Preset = .default,
                overrides: KnobOverrides = KnobOverrides(), ownerUIDs: [UInt32] = []) {
        self.name = name
        self.clientCIDRs = clientCIDRs
        self.timeZoneID = timeZoneID
        self.preset = preset
        self.overrides = overrides
        self.ownerUIDs = ownerUIDs
    }
}

/// An entry a profile manages (SPEC §1): a curated service or a custom domain.
public struct StoredEntry: Hashable, Sendable, Codable {
    public enum Kind: String, Hashable, Sendable, Codable, CaseIterable {
        case service
        case domain
    }

    public var id: EntryID
    public var kind: Kind
    public var added: Instant

    public init(id: EntryID, kind: Kind, added: Instant) {
        self.id = id
        self.kind = kind
        self.added = added
    }
}

/// An implementation intention (SPEC §8): "When [trigger], I will [alternative]".
/// Never deleted automatically (SPEC §12); archiving hides it.
public struct Plan: Hashable, Sendable, Codable {
    public var id: Int64
    public var profile: String
    public var when: String
    public var then: String
    public var created: Instant
    public var archived: Bool
    /// How many times a peek or spend showed it first (SPEC §8).
    public var shownCount: Int

    public init(id: Int64, profile: String, when: String, then: String, created: Instant, archived: Bool = false, shownCount: Int = 0) {
        self.id = id
        self.profile = profile
        self.when = when
        self.then = then
        self.created = created
        self.archived = archived
        self.shownCount = shownCount
    }
}

/// Something to do instead, shown at a bypass (SPEC §8).
public struct Alternative: Hashable, Sendable, Codable {
    public var id: Int64
    public var profile: String
    public var text: String
    public var created: Instant

    public init(id: Int64, profile: String, text: String, created: Instant) {
        self.id = id
        self.profile = profile
        self.text = text
        self.created = created
    }
}

/// Everything stored about one profile that the helper needs to rebuild its rules and wallet.
public struct StoredProfile: Hashable, Sendable {
    public var settings: ProfileSettings
    public var entries: [StoredEntry]
    public var blocks: [Block]
    public var schedules: [Schedule]
    public var focusSessions: [FocusSession]
    /// Grants not ended yet, by id; the same list as `account.wallet.grantsInUse`.
    public var openGrants: [Grant]
    /// Nil until the first commit that carried the profile's account.
    public var account: CreditAccountState?

    /// The rules half, ready for `ProfileRules.status(of:at:)`.
    public var rules: ProfileRules {
        ProfileRules(blocks: blocks, schedules: schedules, focusSessions: focusSessions, grants: openGrants)
    }
}

/// What `Store.load()` returns: the whole state the helper restarts from.
public struct StoredState: Hashable, Sendable {
    /// The trusted clock's anchor saved with the last commit (SPEC §11); nil before the first.
    public var anchor: ClockAnchor?
    /// By name.
    public var profiles: [StoredProfile]
    public var plans: [Plan]
    public var alternatives: [Alternative]

    public func profile(named name: String) -> StoredProfile? { profiles.first { $0.settings.name == name } }
}
