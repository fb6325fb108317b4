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
    /// Uids that own this profile (SPEC §11): they view, spend, edit its rules, grant
    /// or take time and answer its members' requests.
    public var ownerUIDs: [UInt32]
    /// Uids that are members (SPEC §11): they view, spend and ask for time, but do not edit.
    public var memberUIDs: [UInt32]

    public init(name: String, clientCIDRs: [String] = [], timeZoneID: String, preset: Preset = .default,
                overrides: KnobOverrides = KnobOverrides(), ownerUIDs: [UInt32] = [], memberUIDs: [UInt32] = []) {
        self.name = name
        self.clientCIDRs = clientCIDRs
        self.timeZoneID = timeZoneID
        self.preset = preset
        self.overrides = overrides
        self.ownerUIDs = ownerUIDs
        self.memberUIDs = memberUIDs
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decode(String.self, forKey: .name)
        clientCIDRs = try c.decode([String].self, forKey: .clientCIDRs)
        timeZoneID = try c.decode(String.self, forKey: .timeZoneID)
        preset = try c.decode(Preset.self, forKey: .preset)
        overrides = try c.decode(KnobOverrides.self, forKey: .overrides)
        ownerUIDs = try c.decode([UInt32].self, forKey: .ownerUIDs)
        // Settings saved before members existed have none.
        memberUIDs = try c.decodeIfPresent([UInt32].self, forKey: .memberUIDs) ?? []
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
    /// An owner's pause (SPEC §5a), in force or over; nil when none is stored.
    public var pause: Pause? = nil
    /// The owner's daily allowances (SPEC §4a).
    public var allowances: [Allowance] = []

    /// The rules half, ready for `ProfileRules.status(of:at:)`.
    public var rules: ProfileRules {
        ProfileRules(blocks: blocks, schedules: schedules, focusSessions: focusSessions, grants: openGrants, pause: pause)
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
    /// Members' requests for time (SPEC §9a), oldest first.
    public var timeRequests: [TimeRequest] = []
    /// Helper-wide settings in force, by key (`unknown_devices`).
    public var settings: [String: String] = [:]
    /// The household's downloaded lists (SPEC §1): which exist, from where, added by whom; by name.
    public var listSources: [ListSource] = []
    /// What the household holds of each list a refresh shrank under a lock, by name: the summary
    /// alone (`HeldListSummary`); the names are read when their revision changes.
    public var heldLists: [HeldListSummary] = []

    public func profile(named name: String) -> StoredProfile? { profiles.first { $0.settings.name == name } }
}

/// A member's request for time (SPEC §9a), answered by an owner: approved (an `adjust` ledger row
/// with the request's note) or declined.
public struct TimeRequest: Hashable, Sendable, Codable {
    public enum Status: String, Hashable, Sendable, Codable, CaseIterable {
        case pending, approved, declined
    }

    public var id: Int64
    public var profile: String
    public var seconds: Int64
    public var note: String
    public var created: Instant
    public var status: Status
    public var answeredAt: Instant?
    /// Who answered, as the answer's caller was known (a user name, `uid 1000`, or a web sign-in).
    public var answeredBy: String?
    public var answerNote: String?

    public init(id: Int64, profile: String, seconds: Int64, note: String, created: Instant, status: Status = .pending,
                answeredAt: Instant? = nil, answeredBy: String? = nil, answerNote: String? = nil) {
        self.id = id
        self.profile = profile
        self.seconds = seconds
        self.note = note
        self.created = created
        self.status = status
        self.answeredAt = answeredAt
        self.answeredBy = answeredBy
        self.answerNote = answerNote
    }
}

/// A list the household has (`scrolloff lists add`): which lists exist is shared by every helper
/// of one store, while each helper downloads, parses and keeps its own copy (docs/operations.md).
public struct ListSource: Hashable, Sendable {
    public var name: String
    public var url: String
    /// Who added it (a control-socket caller's uid and primary group); nil when not known (a record
    /// written before adders were kept).
    public var addedByUID: UInt32?
    public var addedByGID: UInt32?
    public var added: Instant
    /// The helper (its `[store] node`) it was added through; empty when one helper keeps its own
    /// state (SQLite). Another helper fetches such a list with a member's rights, never with the
    /// adding helper's say-so (SPEC §1 list sources).
    public var addedOn: String

    public init(name: String, url: String, addedByUID: UInt32? = nil, addedByGID: UInt32? = nil, added: Instant, addedOn: String = "") {
        self.name = name
        self.url = url
        self.addedByUID = addedByUID
        self.addedByGID = addedByGID
        self.added = added
        self.addedOn = addedOn
    }
}
