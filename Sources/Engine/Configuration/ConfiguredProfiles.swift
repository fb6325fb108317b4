import Foundation
import ScrollOffCore
import Store

/// What `applyConfiguredProfiles` did, for the reload's one log line.
public struct ProfileConfigurationReport: Sendable, Equatable {
    /// Profiles added or whose settings changed.
    public var changed: [String] = []
    /// Changes kept back because they would loosen a profile while a lock is in force, in words.
    public var heldBack: [String] = []
    /// Daily allowances the file set or changed (SPEC §4a), in words: "kid: 1 h on weekdays for youtube".
    public var allowances: [String] = []

    public init(changed: [String] = [], heldBack: [String] = [], allowances: [String] = []) {
        self.changed = changed
        self.heldBack = heldBack
        self.allowances = allowances
    }
}

/// A daily allowance the configuration file gives (`[[allowances]]`, SPEC §4a): the file's tables
/// for one profile and one set of entries combined into seconds per weekday. The file's value wins
/// at start and at every reload over a change made since with the CLI or the page, as the file's
/// profile settings do; raising one waits for the locks like any loosening (`Supervision.configure`).
public struct ConfiguredAllowance: Hashable, Sendable {
    public var profile: String
    /// Entries as written (services, categories, list names, domains), resolved by the engine; empty = any entry.
    public var entries: [String]
    /// Seconds per weekday, index 0 = Sunday … 6 = Saturday (as `Allowance`); 0 = nothing that day.
    public var secondsByWeekday: [Int64]

    public init(profile: String, entries: [String], secondsByWeekday: [Int64]) {
        self.profile = profile
        self.entries = entries
        self.secondsByWeekday = secondsByWeekday
    }
}

/// Profiles from the configuration file, part of which waits for a lock to end.
struct HeldBackProfiles: Sendable {
    var first: ProfileSettings
    var profiles: [ProfileSettings]
    var allowances: [ConfiguredAllowance] = []
    /// When the earliest lock that held a change back ends.
    var due: Instant
}

/// What the configuration file asks of the profiles that the engine keeps between reloads (SPEC
/// §9, §11): the profiles it names, the part of them held back by a lock, the profile unknown
/// devices follow and a new choice of it that waits for a lock. The engine owns one; the timer
/// applies what waits once it is due (`dues`).
struct ConfiguredProfiles: Sendable {
    /// Profiles the configuration file names (`applyConfiguredProfiles`): `profile rm` leaves them
    /// to the file, since a reload would bring them back.
    var names: Set<String> = []
    /// The configuration file's profiles while part of them is held back by a lock, and when the
    /// earliest such lock ends: the timer applies them again then (`applyHeldBackProfilesIfDue`).
    var heldBack: HeldBackProfiles?
    /// The profile clients no rule claims follow (`[dns] unknown_devices`); the default profile
    /// unless configured, and the default profile again if the named one is gone.
    var unknownDevices: String
    /// A new `unknown_devices` that waits for the locks of the profile unknown devices follow now.
    var heldUnknownDevices: (name: String, due: Instant)?

    /// The settings key `unknown_devices` is kept under in the store.
    static let unknownDevicesKey = "unknown_devices"

    init(unknownDevices: String) {
        self.unknownDevices = unknownDevices
    }

    /// When the timer has work here: each held-back change's due time.
    var dues: [Instant?] { [heldBack?.due, heldUnknownDevices?.due] }
}
