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

extension HelperEngine {
    /// Checks the configuration file's profiles without changing anything: names, zones, knobs and
    /// client networks, each error naming the profile (ARCHITECTURE principle 5: a reload is
    /// validated whole before any of it applies).
    public nonisolated static func validateConfiguredProfiles(default first: ProfileSettings, profiles: [ProfileSettings]) throws(EngineError) {
        guard first.name == defaultProfile else {
            throw .invalid("The default profile must be named “\(defaultProfile)”, not “\(first.name)”.")
        }
        guard first.clientCIDRs.isEmpty else {
            throw .invalid("The default profile covers every client no other profile claims; give client networks to another profile instead.")
        }
        var names: Set<String> = [defaultProfile]
        for p in [first] + profiles {
            guard !p.name.isEmpty, p.name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
                throw .invalid("“\(p.name)” cannot be a profile name; use letters, digits, - and _.")
            }
            if p.name != first.name || p != first {
                guard names.insert(p.name).inserted else {
                    throw .invalid("Profile “\(p.name)” is defined twice; merge the two into one [[profile]] table.")
                }
            }
            // Zone, knobs and networks, checked exactly as a running profile is built.
            _ = try ProfileRuntime.fresh(p, now: Instant(millisecondsSince1970: 0))
        }
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
    /// start, whichever comes first). Changes that only tighten apply at once (strengthening is
    /// always allowed).
    @discardableResult
    public func applyConfiguredProfiles(default first: ProfileSettings, profiles configured: [ProfileSettings]) throws(EngineError) -> ProfileConfigurationReport {
        try Self.validateConfiguredProfiles(default: first, profiles: configured)
        let wanted = [first] + configured
        let differs = wanted.contains { s in profiles.first(where: { $0.name == s.name })?.settings != s }
        guard differs else {
            heldBackProfiles = nil
            return ProfileConfigurationReport()
        }
        var earliestUnlock: Instant?
        let report = try perform { (w: inout Work) throws(EngineError) -> ProfileConfigurationReport in
            var report = ProfileConfigurationReport()
            for var settings in wanted {
                guard let i = w.profiles.firstIndex(where: { $0.name == settings.name }) else {
                    var fresh = try ProfileRuntime.fresh(settings, now: w.now)
                    w.change.append(.saveProfile(settings))
                    let starter = fresh.account.grantStarter(at: w.now)
                    w.change.record(starter, account: fresh.account.state, profile: settings.name)
                    w.profiles = Self.ordered(w.profiles + [fresh])
                    report.changed.append(settings.name)
                    continue
                }
                let old = w.profiles[i].settings
                guard old != settings else { continue }
                let loosenings = ProfileWeakening.loosenings(from: old, to: settings)
                if !loosenings.isEmpty, let until = ProfileWeakening.locksEnd(of: w.profiles[i], at: w.now) {
                    earliestUnlock = min(earliestUnlock ?? until, until)
                    report.heldBack.append(
                        "profile \(settings.name): \(loosenings.joined(separator: "; ")) waits until "
                            + "\(Self.logTime(until)) while a cooldown or curfew edit lock is in force; it applies then by itself")
                    guard old.ownerUIDs != settings.ownerUIDs else { continue }
                    let owners = settings.ownerUIDs
                    settings = old
                    settings.ownerUIDs = owners
                }
                let rebuilt = try ProfileRuntime.fresh(settings, now: w.now)
                w.profiles[i].settings = settings
                w.profiles[i].networks = rebuilt.networks
                w.profiles[i].account.policy = rebuilt.account.policy
                w.change.append(.saveProfile(settings))
                report.changed.append(settings.name)
            }
            return report
        }
        // The file stays the wish: what waits is applied by the timer when the lock ends.
        heldBackProfiles = earliestUnlock.map { HeldBackProfiles(first: first, profiles: configured, due: $0) }
        if heldBackProfiles != nil { wake() }
        return report
    }

    /// The timer's share: once the lock that held part of the file's profiles back has ended, the
    /// same profiles are applied again (anything still locked waits for its own lock's end).
    func applyHeldBackProfilesIfDue(now: Instant) {
        guard let held = heldBackProfiles, now >= held.due else { return }
        do {
            let report = try applyConfiguredProfiles(default: held.first, profiles: held.profiles)
            if !report.changed.isEmpty {
                logger.notice("held-back configuration applied now that its lock has ended",
                              metadata: ["profiles": "\(report.changed.joined(separator: ","))"])
            }
            for line in report.heldBack { logger.notice("configuration still held back", metadata: ["detail": "\(line)"]) }
        } catch {
            // The profiles were valid when they were held back, so this is a failed write (a full
            // disk): try again in a minute rather than at once, which would spin the timer.
            heldBackProfiles?.due = now + .seconds(60)
            logger.error("applying the held-back configuration failed; trying again in a minute", metadata: ["error": "\(error)"])
        }
    }

    /// An instant as the log shows it: ISO 8601 in UTC.
    nonisolated static func logTime(_ t: Instant) -> String {
        Date(timeIntervalSince1970: Double(t.millisecondsSince1970) / 1000).ISO8601Format()
    }
}
