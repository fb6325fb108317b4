import Enforcement
import Foundation
import ScrollOffCore
import Store

extension HelperEngine {
    /// Checks the configuration file's profiles without changing anything: names, zones, knobs and
    /// client networks, each error naming the profile (ARCHITECTURE principle 5: a reload is
    /// validated whole before any of it applies).
    public nonisolated static func validateConfiguredProfiles(default first: ProfileSettings, profiles: [ProfileSettings]) throws(EngineError) {
        try ConfigurationPlan.validate(default: first, profiles: profiles)
    }

    /// Puts the configuration file's profiles in force, at start and at every reload (SPEC §9, §6,
    /// §11): each is added when new (with its starter credit, like `scrolloff profile add`) or has
    /// its zone, preset, knobs, owners and client networks replaced, committed to the database like
    /// any other change and then republished, so DNS routes clients by the new networks at once.
    /// Profiles the file does not name (made with the CLI) are left as they are.
    ///
    /// Anti-tamper (SPEC §3, §11): running cooldowns and edit locks are instants or follow from the
    /// windows themselves, so no knob change ends them early. A change that would loosen a profile
    /// (`ProfileWeakening`) while any lock of that profile is in force is held back whole, except
    /// for its owners, exactly as a weakening from the CLI is refused inside a cooldown; it is
    /// reported with the time the locks end and applied by the timer then (or by the next reload or
    /// start, whichever comes first). Clients go by longest prefix, so networks added or widened
    /// anywhere (a new `0.0.0.0/0`, a rename that wins the tie, a /32 inside a locked /24) can also
    /// take a locked profile's devices: such a change waits for that profile's locks the same way
    /// (a new profile is not created yet; `ProfileWeakening.takeovers`). Changes that only tighten
    /// apply at once (strengthening is always allowed).
    @discardableResult
    public func applyConfiguredProfiles(default first: ProfileSettings, profiles configured: [ProfileSettings]) throws(EngineError) -> ProfileConfigurationReport {
        try Self.validateConfiguredProfiles(default: first, profiles: configured)
        // SPEC §12: the rule changes this applies are the configuration file's.
        actorOverride = ChangeActor.configurationFile
        defer { actorOverride = nil }
        configuredProfiles.names = Set(configured.map(\.name))
        let wanted = [first] + configured
        let differs = wanted.contains { s in profiles.first(where: { $0.name == s.name })?.settings != s }
        guard differs else {
            configuredProfiles.heldBack = nil
            return ProfileConfigurationReport()
        }
        var earliestUnlock: Instant?
        let report = try perform { (w: inout Work) throws(EngineError) -> ProfileConfigurationReport in
            let plan = try ConfigurationPlan(wanted: wanted, in: w, neighbours: neighbours, box: box)
            earliestUnlock = plan.earliestUnlock
            return try plan.apply(to: &w)
        }
        // The file stays the wish: what waits is applied by the timer when the lock ends.
        configuredProfiles.heldBack = earliestUnlock.map { HeldBackProfiles(first: first, profiles: configured, due: $0) }
        if configuredProfiles.heldBack != nil { wake() }
        return report
    }

    /// The timer's share: once the lock that held part of the file's profiles back has ended, the
    /// same profiles are applied again (anything still locked waits for its own lock's end).
    func applyHeldBackProfilesIfDue(now: Instant) {
        guard let held = configuredProfiles.heldBack, now >= held.due else { return }
        do {
            let report = try applyConfiguredProfiles(default: held.first, profiles: held.profiles)
            if !report.changed.isEmpty {
                logger.notice("held-back configuration applied now that its lock has ended",
                              metadata: ["profiles": "\(report.changed.joined(separator: ","))"])
            }
            for line in report.heldBack { logger.notice("configuration still held back", metadata: ["detail": "\(line)"]) }
        } catch .invalid(let why) {
            // Valid when held back, invalid now: a tzdata update removed a zone the file names, say.
            // Retrying cannot help until the file changes, so give up once, loudly, rather than
            // logging the same error every minute; the profiles in force stay as they are.
            configuredProfiles.heldBack = nil
            logger.error("the held-back configuration can no longer apply; edit the configuration file and reload (systemctl reload scrolloff-dns)",
                         metadata: ["error": "\(why)"])
        } catch {
            // A failed write (a full disk): try again in a minute rather than at once, which would
            // spin the timer.
            configuredProfiles.heldBack?.due = now + .seconds(60)
            logger.error("applying the held-back configuration failed; trying again in a minute", metadata: ["error": "\(error)"])
        }
    }

    /// An instant as the log shows it: ISO 8601 in UTC.
    package nonisolated static func logTime(_ t: Instant) -> String {
        Date(timeIntervalSince1970: Double(t.millisecondsSince1970) / 1000).ISO8601Format()
    }
}

// MARK: Unknown devices

extension HelperEngine {
    /// `[profile] unknown_devices` (SPEC §9): the profile clients no profile claims follow, so a
    /// household can make unknown devices strict. A name that is not a profile (removed since)
    /// falls back to the default profile. Republishes at once, except that moving unknown devices
    /// out of a profile while one of its locks holds (a cooldown, a curfew edit lock, a focus
    /// session) would free them, so, like a configured client change that takes devices from a
    /// locked profile, it waits for that lock and then applies by itself.
    /// - Returns: what waits and until when, for the log; nil when it applied.
    @discardableResult
    public func setUnknownDevices(_ name: String) -> String? {
        configuredProfiles.heldUnknownDevices = nil
        guard name != configuredProfiles.unknownDevices else { return nil }
        let now = advanceClock()
        if let current = profiles.first(where: { $0.name == configuredProfiles.unknownDevices }), let until = ProfileWeakening.locksEnd(of: current, at: now) {
            configuredProfiles.heldUnknownDevices = (name, until)
            wake()
            return "unknown_devices = \"\(name)\" waits until \(Self.logTime(until)): unknown devices follow profile \(configuredProfiles.unknownDevices), "
                + "which has a cooldown or curfew edit lock in force; it applies then by itself"
        }
        // Kept in the store, so after a restart the next change is checked against what was in force.
        do {
            _ = try commitReturning(StateChange([.saveSetting(key: ConfiguredProfiles.unknownDevicesKey, value: name)]), now: now)
        } catch {
            // Routing follows the file even when the disk refuses; the next start reads the file again.
            logger.error("unknown_devices could not be saved; it applies until the helper stops", metadata: ["error": "\(error)"])
        }
        configuredProfiles.unknownDevices = name
        rebuild(now: now)
        return nil
    }

    /// The timer's share of `setUnknownDevices`: the held change applies once the lock has ended
    /// (or waits again for a lock made since).
    func applyHeldUnknownDevicesIfDue(now: Instant) {
        guard let held = configuredProfiles.heldUnknownDevices, now >= held.due else { return }
        if let still = setUnknownDevices(held.name) { logger.notice("configuration still held back", metadata: ["detail": "\(still)"]) }
    }
}
