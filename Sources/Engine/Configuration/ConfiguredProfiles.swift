import Foundation
import ScrollOffCore
import Store

/// What `applyConfiguredProfiles` did, for the reload's one log line.
public struct ProfileConfigurationReport: Sendable, Equatable {
    /// Profiles added or whose settings changed.
    public var changed: [String] = []
    /// Changes kept back because they would loosen a profile while a lock is in force, in words.
    public var heldBack: [String] = []

    public init(changed: [String] = [], heldBack: [String] = []) {
        self.changed = changed
        self.heldBack = heldBack
    }
}

/// Profiles from the configuration file, part of which waits for a lock to end.
struct HeldBackProfiles: Sendable {
    var first: ProfileSettings
    var profiles: [ProfileSettings]
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
