import Enforcement
import Engine
import Foundation
import ScrollOffCore
import Store

/// `[profile]` (the default profile: every client no other profile claims) and `[[profiles]]`
/// (SPEC §6, §9, §11). A `[[profiles]]` table starts from `[profile]`: it inherits the time zone,
/// the preset and the knobs, and what it sets itself replaces them.
enum ProfileSection {
    static let presetsAllowed = Preset.allCases.map(\.rawValue).joined(separator: ", ")
    static let zoneAllowed = "\"\" (the system's zone) or an IANA zone such as \"Europe/Berlin\""

    static func read(_ root: TableReader, into configuration: inout HelperConfiguration) {
        let defaults = root.table("profile")
        var base = configuration.defaultProfile
        if let zone = zone(defaults) { base.timeZoneID = zone }
        if let preset = preset(defaults) { base.preset = preset }
        if let owners = uids(defaults, "owners") { base.ownerUIDs = owners }
        if let members = uids(defaults, "members") { base.memberUIDs = members }
        let unknownAllowed = "\"default\" or the name of a [[profiles]] table"
        let unknownDevices = defaults.string("unknown_devices", allowed: unknownAllowed)
        let baseKnobs = defaults.table("knobs")
        base.overrides = knobs(baseKnobs, preset: base.preset)
        baseKnobs.finish()
        defaults.finish()
        configuration.defaultProfile = base

        var profiles: [ProfileSettings] = []
        var claimed: [String: String] = [:]
        for t in root.tables("profiles") {
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
                defaults.report("unknown_devices", "is \"\(unknownDevices)\", which no [[profiles]] table names", allowed: unknownAllowed)
            }
        }
    }

    private static func profile(
        _ t: TableReader, inheriting base: ProfileSettings, taken: [String], claimed: inout [String: String]
    ) -> ProfileSettings? {
        let nameAllowed = "letters, digits, - and _, not \"default\", one [[profiles]] per name"
        var valid = true
        let name = t.string("name", allowed: nameAllowed)
        if let name {
            // The rule of `scrolloff profile add`, so a profile named here can be named there.
            if name.isEmpty || !name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) || name == "default" {
                t.report("name", "is \"\(name)\"", allowed: nameAllowed)
                valid = false
            } else if taken.contains(name) {
                t.report("name", "is \"\(name)\", the name of an earlier [[profiles]]", allowed: nameAllowed)
                valid = false
            }
        } else {
            if !t.has("name") { t.report("name", "is missing; every [[profiles]] needs one", allowed: nameAllowed) }
            valid = false
        }
        let clientsAllowed = "addresses, networks or MAC addresses such as \"192.168.1.0/24\", \"fd00::/8\" or \"aa:bb:cc:dd:ee:ff\", each claimed by one profile"
        var clients: [String] = []
        if let items = t.strings("clients", allowed: clientsAllowed) {
            if items.isEmpty {
                t.report("clients", "is empty, so the profile would cover nobody", allowed: clientsAllowed)
                valid = false
            }
            for item in items {
                do {
                    // A MAC (matched through the neighbour table) or a network, keyed the same way
                    // `profile add` checks them, so both refuse a client claimed twice.
                    if MACAddress.parse(item.value) == nil { _ = try ClientNetwork(parsing: item.value) }
                    let key = ClientKey.keys([item.value])[0]
                    if let owner = claimed[key] {
                        t.log.report(item.path, "is \"\(item.value)\", already a client of profile \(owner)", allowed: clientsAllowed)
                        valid = false
                    } else {
                        claimed[key] = name ?? t.path
                    }
                    clients.append(item.value)
                } catch {
                    t.log.report(item.path, "is \"\(item.value)\": \(error.description)", allowed: clientsAllowed)
                    valid = false
                }
            }
        } else {
            if !t.has("clients") { t.report("clients", "is missing; every [[profiles]] needs its client networks", allowed: clientsAllowed) }
            valid = false
        }
        var settings = base
        settings.clientCIDRs = clients
        if let zone = zone(t) { settings.timeZoneID = zone }
        if let preset = preset(t) { settings.preset = preset }
        if let owners = uids(t, "owners") { settings.ownerUIDs = owners }
        if let members = uids(t, "members") { settings.memberUIDs = members }
        let knobTable = t.table("knobs")
        settings.overrides = merged(knobs(knobTable, preset: settings.preset), over: base.overrides)
        knobTable.finish()
        guard valid, let name else { return nil }
        settings.name = name
        return settings
    }

    private static func zone(_ t: TableReader) -> String? {
        guard let zone = t.string("time_zone", allowed: zoneAllowed) else { return nil }
        if zone.isEmpty { return TimeZone.current.identifier }
        guard TimeZone(identifier: zone) != nil else {
            t.report("time_zone", "is \"\(zone)\", which is not a time zone this system knows", allowed: zoneAllowed)
            return nil
        }
        return zone
    }

    private static func preset(_ t: TableReader) -> Preset? {
        guard let text = t.string("preset", allowed: presetsAllowed) else { return nil }
        guard let preset = Preset(rawValue: text) else {
            t.report("preset", "is \"\(text)\"", allowed: presetsAllowed)
            return nil
        }
        return preset
    }

    /// `owners` (edit, view, spend, grant) or `members` (view, spend, ask): uids allowed to act on
    /// the profile through the control socket (SPEC §11).
    private static func uids(_ t: TableReader, _ key: String) -> [UInt32]? {
        let allowed = "user ids from 0 to 4294967294, such as [1000, 1001]"
        guard let items = t.array(key, allowed: allowed) else { return nil }
        var uids: [UInt32] = []
        for (item, path) in items {
            // 4294967295 is (uid_t)-1, "no user" to chown(2) and setresuid(2).
            if let uid = TableReader.integer(item, at: path, in: 0...4_294_967_294, allowed: allowed, log: t.log) {
                uids.append(UInt32(uid))
            }
        }
        return uids.count == items.count ? uids : nil
    }

    /// Every knob of SPEC §6 set in `t`, each checked on its own against `Knobs.resolve`, so that
    /// every knob out of range is reported, not only the first.
    private static func knobs(_ t: TableReader, preset: Preset) -> KnobOverrides {
        var all = KnobOverrides()
        for knob in Knob.allCases {
            var one = KnobOverrides()
            let key = knob.rawValue
            let allowed = knob.allowedRange
            switch knob {
            case .cooldown, .dailyEarnCap, .paidPeekCost, .peekLength, .tokenLength, .earnAmount, .earnInterval,
                 .starterCredit, .perEntryDailySpendCap:
                guard let span = t.duration(key, in: .zero ... .hours(24 * 366), allowed: allowed) else { continue }
                one.set(knob, span: span)
            case .rolloverDays, .freePeeksPerDay, .paidPeeksPerDay, .includedTokensPerMonth:
                guard let number = t.integer(key, in: Int(Int32.min)...Int(Int32.max), allowed: allowed) else { continue }
                one.set(knob, count: number)
            case .perEntryWallets:
                guard let flag = t.bool(key) else { continue }
                one.perEntryWallets = flag
            }
            do {
                _ = try Knobs.resolve(preset: preset, overrides: one)
                all.merge(one)
            } catch {
                t.report(key, "is \(error.value)", allowed: allowed)
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
