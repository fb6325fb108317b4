import ScrollOffCore

/// `[profile]`, `[[profiles]]` and their knobs (SPEC §6, §9, §11). The engine applies them and
/// reports whether anything changed (a loosening is held back while a lock is in force).
public enum ProfileKeys {
    static let profiles = ReloadPart.appliedByOwner(named: .section(.profiles))

    public static let timeZone = Setting(
        .profile, "time_zone", .text, default: .value("\"\""),
        allowed: "\"\" (the system's zone) or an IANA zone such as \"Europe/Berlin\"",
        doc: "IANA time zone of the profile's days (midnight resets, daily caps); \"\" = the system's zone.",
        reload: profiles)
    public static let preset = Setting(
        .profile, "preset", .choice(Preset.allCases.map(\.rawValue)), default: .value("\"strict\""),
        allowed: Preset.allCases.map(\.rawValue).joined(separator: ", "),
        doc: "Starting point for the knobs (SPEC §6).",
        reload: profiles)
    static let uidsAllowed = "user ids from 0 to 4294967294, such as [1000, 1001]"
    // 4294967295 is (uid_t)-1, "no user" to chown(2) and setresuid(2).
    public static let owners = Setting(
        .profile, "owners", .integers(0...4_294_967_294), default: .value("[]"),
        allowed: uidsAllowed,
        doc: "User ids that own the profile: they view it, spend, change its rules, grant time and answer requests.",
        reload: profiles)
    public static let members = Setting(
        .profile, "members", .integers(0...4_294_967_294), default: .value("[]"),
        allowed: uidsAllowed,
        doc: "User ids that are members: they view the profile, spend its credit and ask for time.",
        reload: profiles)
    public static let unknownDevices = Setting(
        .profile, "unknown_devices", .text, default: .value("\"default\""),
        allowed: "\"default\" or the name of a [[profiles]] table",
        doc: "The profile that devices no [[profiles]] table claims follow; this machine itself always follows the default one.",
        reload: profiles)

    public static let name = Setting(
        .profiles, "name", .text, default: .none("required"),
        allowed: "letters, digits, - and _, not \"default\", one [[profiles]] per name",
        doc: "The profile's name, as `scrolloff profile` shows it.",
        reload: profiles)
    public static let clients = Setting(
        .profiles, "clients", .texts, default: .none("required"),
        allowed: "addresses, networks or MAC addresses such as \"192.168.1.0/24\", \"fd00::/8\" or \"aa:bb:cc:dd:ee:ff\", each claimed by one profile",
        doc: "The devices the profile covers; a MAC keeps a device in its profile when its address changes.",
        reload: profiles)
    public static let profilesTimeZone = timeZone.also(in: .profiles)
    public static let profilesPreset = preset.also(in: .profiles)
    public static let profilesOwners = owners.also(in: .profiles)
    public static let profilesMembers = members.also(in: .profiles)

    public static let all = [timeZone, preset, owners, members, unknownDevices]
    public static let profileTables = [name, clients, profilesTimeZone, profilesPreset, profilesOwners, profilesMembers]

    /// Every knob of SPEC §6, in `[profile.knobs]` and in each `[[profiles]]`'s `knobs`.
    public static let knobs = Knob.allCases.map { knob in
        Setting(.profileKnobs, knob.rawValue, .knob(knob), default: .preset, allowed: knob.allowedRange, doc: doc(knob), reload: profiles)
    }
    public static let profilesKnobs = knobs.map { $0.also(in: .profilesKnobs) }

    /// The knob declared in `section` (`profile.knobs` or `profiles.knobs`).
    static func knob(_ knob: Knob, in section: SettingSection) -> Setting {
        (section == .profilesKnobs ? profilesKnobs : knobs)[Knob.allCases.firstIndex(of: knob)!]
    }

    static func doc(_ knob: Knob) -> String {
        switch knob {
        case .cooldown: "How long a new block or schedule cannot be weakened."
        case .dailyEarnCap: "Most credit earned per day."
        case .rolloverDays: "Extra days earned credit lives; 0 = it expires at midnight."
        case .freePeeksPerDay: "Free 60-second peeks per day."
        case .paidPeeksPerDay: "Peeks per day that cost paid_peek_cost each, after the free ones."
        case .paidPeekCost: "What one paid peek costs."
        case .peekLength: "How long a peek opens an entry."
        case .includedTokensPerMonth: "Emergency tokens per calendar month."
        case .tokenLength: "How long a token opens an entry."
        case .earnAmount: "Credit earned per earn_interval of abstinence."
        case .earnInterval: "Abstinence needed for one award."
        case .starterCredit: "One-off credit at first setup."
        case .perEntryWallets: "Whether credit can be earmarked for one entry."
        case .perEntryDailySpendCap: "Most credit spent on one entry per day; \"0\" = no cap."
        }
    }
}
