import Enforcement
import Engine
import Foundation
import ScrollOffCore
import Store

/// `[profile]` (the default profile: every client no other profile claims) and `[[profiles]]`
/// (SPEC §6, §9, §11). A `[[profiles]]` table starts from `[profile]`: it inherits the time zone,
/// the preset and the knobs, and what it sets itself replaces them.
enum ProfileSection {
    static func read(_ root: TableReader, into configuration: inout HelperConfiguration) {
        let defaults = root.table(.profile)
        var base = configuration.defaultProfile
        if let zone = zone(defaults, ProfileKeys.timeZone) { base.timeZoneID = zone }
        if let preset = defaults.choice(ProfileKeys.preset, as: Preset.self) { base.preset = preset }
        if let owners = uids(defaults, ProfileKeys.owners) { base.ownerUIDs = owners }
        if let members = uids(defaults, ProfileKeys.members) { base.memberUIDs = members }
        let unknownKey = ProfileKeys.unknownDevices
        let unknownDevices = defaults.string(unknownKey)
        let baseKnobs = defaults.table(.profileKnobs)
        base.overrides = knobs(baseKnobs, .profileKnobs, preset: base.preset)
        baseKnobs.finish()
        defaults.finish()
        configuration.defaultProfile = base

        var profiles: [ProfileSettings] = []
        var claimed: [String: String] = [:]
        for t in root.tables(.profiles) {
            if let profile = profile(t, inheriting: base, taken: profiles.map(\.name), claimed: &claimed) {
                profiles.append(profile)
            }
            t.finish()
        }
        configuration.profiles = profiles
        if let unknownDevices {
            if unknownDevices == "default" || profiles.contains(where: { $0.name == unknownDevices }) {
                configuration.unknownDevices = unknownDevices
            } else {
                defaults.report(unknownKey, "is \"\(unknownDevices)\", which no [[profiles]] table names")
            }
        }
    }

    private static func profile(
        _ t: TableReader, inheriting base: ProfileSettings, taken: [String], claimed: inout [String: String]
    ) -> ProfileSettings? {
        let nameKey = ProfileKeys.name, clientsKey = ProfileKeys.clients
        var valid = true
        let name = t.string(nameKey)
        if let name {
            // The rule of `scrolloff profile add`, so a profile named here can be named there.
            if name.isEmpty || !name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) || name == "default" {
                t.report(nameKey, "is \"\(name)\"")
                valid = false
            } else if taken.contains(name) {
                t.report(nameKey, "is \"\(name)\", the name of an earlier [[profiles]]")
                valid = false
            }
        } else {
            if !t.has(nameKey) { t.report(nameKey, "is missing; every [[profiles]] needs one") }
            valid = false
        }
        var clients: [String] = []
        if let items = t.strings(clientsKey) {
            if items.isEmpty {
                t.report(clientsKey, "is empty, so the profile would cover nobody")
                valid = false
            }
            for item in items {
                do {
                    // A MAC (matched through the neighbour table) or a network, keyed the same way
                    // `profile add` checks them, so both refuse a client claimed twice.
                    if MACAddress.parse(item.value) == nil { _ = try ClientNetwork(parsing: item.value) }
                    let key = ClientKey.keys([item.value])[0]
                    if let owner = claimed[key] {
                        t.log.report(item.path, "is \"\(item.value)\", already a client of profile \(owner)", allowed: clientsKey.allowed)
                        valid = false
                    } else {
                        claimed[key] = name ?? t.path
                    }
                    clients.append(item.value)
                } catch {
                    t.log.report(item.path, "is \"\(item.value)\": \(error.description)", allowed: clientsKey.allowed)
                    valid = false
                }
            }
        } else {
            if !t.has(clientsKey) { t.report(clientsKey, "is missing; every [[profiles]] needs its client networks") }
            valid = false
        }
        var settings = base
        settings.clientCIDRs = clients
        if let zone = zone(t, ProfileKeys.profilesTimeZone) { settings.timeZoneID = zone }
        if let preset = t.choice(ProfileKeys.profilesPreset, as: Preset.self) { settings.preset = preset }
        if let owners = uids(t, ProfileKeys.profilesOwners) { settings.ownerUIDs = owners }
        if let members = uids(t, ProfileKeys.profilesMembers) { settings.memberUIDs = members }
        let knobTable = t.table(.profilesKnobs)
        settings.overrides = merged(knobs(knobTable, .profilesKnobs, preset: settings.preset), over: base.overrides)
        knobTable.finish()
        guard valid, let name else { return nil }
        settings.name = name
        return settings
    }

    private static func zone(_ t: TableReader, _ setting: Setting) -> String? {
        guard let zone = t.string(setting) else { return nil }
        if zone.isEmpty { return TimeZone.current.identifier }
        guard TimeZone(identifier: zone) != nil else {
            t.report(setting, "is \"\(zone)\", which is not a time zone this system knows")
            return nil
        }
        return zone
    }

    /// `owners` (edit, view, spend, grant) or `members` (view, spend, ask): uids allowed to act on
    /// the profile through the control socket (SPEC §11).
    private static func uids(_ t: TableReader, _ setting: Setting) -> [UInt32]? {
        guard case .integers(let range) = setting.value else { preconditionFailure("\(setting.path) is not declared an array of whole numbers") }
        guard let items = t.array(setting) else { return nil }
        var uids: [UInt32] = []
        for (item, path) in items {
            if let uid = TableReader.integer(item, at: path, in: range, allowed: setting.allowed, log: t.log) {
                uids.append(UInt32(uid))
            }
        }
        return uids.count == items.count ? uids : nil
    }

    /// Every knob of SPEC §6 set in `t`, each checked on its own against `Knobs.resolve`, so that
    /// every knob out of range is reported, not only the first. The reader's bounds here only
    /// keep the numbers sane; the knob's own range is `Knobs.resolve`'s (ScrollOffCore).
    private static func knobs(_ t: TableReader, _ section: SettingSection, preset: Preset) -> KnobOverrides {
        var all = KnobOverrides()
        for knob in Knob.allCases {
            var one = KnobOverrides()
            let setting = ProfileKeys.knob(knob, in: section)
            let key = setting.key
            let allowed = setting.allowed
            switch knob {
            case .cooldown, .dailyEarnCap, .paidPeekCost, .peekLength, .tokenLength, .earnAmount, .earnInterval,
                 .starterCredit, .perEntryDailySpendCap:
                guard let span = t.duration(key, in: .zero ... .hours(24 * 366), allowed: allowed) else { continue }
                one.set(knob, span: span)
            case .rolloverDays, .freePeeksPerDay, .paidPeeksPerDay, .includedTokensPerMonth:
                guard let number = t.integer(key, in: Int(Int32.min)...Int(Int32.max), allowed: allowed) else { continue }
                one.set(knob, count: number)
            case .perEntryWallets:
                guard let flag = t.bool(setting) else { continue }
                one.perEntryWallets = flag
            }
            do {
                _ = try Knobs.resolve(preset: preset, overrides: one)
                all.merge(one)
            } catch {
                t.report(setting, "is \(error.value)")
            }
        }
        return all
    }

    private static func merged(_ own: KnobOverrides, over inherited: KnobOverrides) -> KnobOverrides {
        var out = inherited
        out.merge(own)
        return out
    }
}

extension KnobOverrides {
    mutating func set(_ knob: Knob, span: Span) {
        switch knob {
        case .cooldown: cooldown = span
        case .dailyEarnCap: dailyEarnCap = span
        case .paidPeekCost: paidPeekCost = span
        case .peekLength: peekLength = span
        case .tokenLength: tokenLength = span
        case .earnAmount: earnAmount = span
        case .earnInterval: earnInterval = span
        case .starterCredit: starterCredit = span
        case .perEntryDailySpendCap: perEntryDailySpendCap = span
        default: assertionFailure("\(knob) is not a length of time")
        }
    }

    mutating func set(_ knob: Knob, count: Int) {
        switch knob {
        case .rolloverDays: rolloverDays = count
        case .freePeeksPerDay: freePeeksPerDay = count
        case .paidPeeksPerDay: paidPeeksPerDay = count
        case .includedTokensPerMonth: includedTokensPerMonth = count
        default: assertionFailure("\(knob) is not a count")
        }
    }

    /// `other`'s knobs replace this one's where `other` sets them.
    mutating func merge(_ other: KnobOverrides) {
        cooldown = other.cooldown ?? cooldown
        dailyEarnCap = other.dailyEarnCap ?? dailyEarnCap
        rolloverDays = other.rolloverDays ?? rolloverDays
        freePeeksPerDay = other.freePeeksPerDay ?? freePeeksPerDay
        paidPeeksPerDay = other.paidPeeksPerDay ?? paidPeeksPerDay
        paidPeekCost = other.paidPeekCost ?? paidPeekCost
        peekLength = other.peekLength ?? peekLength
        includedTokensPerMonth = other.includedTokensPerMonth ?? includedTokensPerMonth
        tokenLength = other.tokenLength ?? tokenLength
        earnAmount = other.earnAmount ?? earnAmount
        earnInterval = other.earnInterval ?? earnInterval
        starterCredit = other.starterCredit ?? starterCredit
        perEntryWallets = other.perEntryWallets ?? perEntryWallets
        perEntryDailySpendCap = other.perEntryDailySpendCap ?? perEntryDailySpendCap
    }
}
