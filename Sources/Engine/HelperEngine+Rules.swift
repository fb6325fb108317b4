import ControlAPI
import DomainLists
import Enforcement
import Foundation
import ScrollOffCore
import Store

extension HelperEngine {
    // MARK: Entries

    /// What one word of `block WORD…` names (SPEC §1): a service id, every service of a category,
    /// or one custom domain (normalized: lowercase, A-labels, no trailing dot).
    func resolve(_ words: [String]) throws(EngineError) -> [(EntryID, StoredEntry.Kind)] {
        var out: [(EntryID, StoredEntry.Kind)] = []
        var seen = Set<EntryID>()
        for word in words {
            let trimmed = word.trimmingCharacters(in: .whitespaces)
            var found: [(EntryID, StoredEntry.Kind)]
            if let services = catalog.resolve(trimmed) {
                found = services.map { (EntryID($0.id), .service) }
            } else if isListName(trimmed) {
                // A fetched list is blocked by its name, like a service (the store has two kinds).
                found = [(EntryID(trimmed), .service)]
            } else if trimmed.contains("."), let name = try? DomainName(trimmed) {
                found = [(EntryID(name.text), .domain)]
            } else {
                throw .notFound("“\(word)” is not a service, a category or a domain. Try `scrolloff services` for the list, or write a domain like news.example.com.")
            }
            for f in found where seen.insert(f.0).inserted { out.append(f) }
        }
        guard !out.isEmpty else { throw .invalid("Name at least one service, category or domain.") }
        return out
    }

    /// Whether `word` names a configured list source (fetched yet or not).
    func isListName(_ word: String) -> Bool {
        let name = word.lowercased()
        return lists[name] != nil || listNames.contains(name)
    }

    /// The entry id `word` names for a single-entry command (`use`, `peek`, `unblock`).
    func resolveOne(_ word: String) throws(EngineError) -> EntryID {
        if let service = catalog.service(id: word) { return EntryID(service.id) }
        if isListName(word) { return EntryID(word) }
        if word.contains("."), let name = try? DomainName(word) { return EntryID(name.text) }
        throw .notFound("“\(word)” is not a service or a domain. Try `scrolloff services` for the list.")
    }

    /// `scrolloff block ENTRY… [--reason TEXT]`: blocks around the clock (SPEC §2 "earning mode")
    /// and starts or extends each entry's cooldown (SPEC §3). Blocking again is strengthening, so
    /// it is always allowed.
    public func block(_ words: [String], reason: String? = nil, profile: String = HelperEngine.defaultProfile) throws(EngineError) -> BlockResult {
        let resolved = try resolve(words)
        return try perform { (w: inout Work) throws(EngineError) -> BlockResult in
            let i = try profileIndex(profile, in: w.profiles)
            var p = w.profiles[i]
            for (id, kind) in resolved {
                if !p.entries.contains(where: { $0.id == id }) {
                    let entry = StoredEntry(id: id, kind: kind, added: w.now)
                    p.entries.append(entry)
                    w.change.append(.saveEntry(profile: p.name, entry))
                }
                let existing = p.blocks.first { $0.entry == id }
                let block = ChangeRules.block(id, existing: existing, at: w.now, cooldown: p.knobs.cooldown, reason: reason)
                p.blocks.removeAll { $0.entry == id }
                p.blocks.append(block)
                w.change.append(.saveBlock(profile: p.name, block))
            }
            w.profiles[i] = p
            let ids = resolved.map(\.0)
            let names = ids.map(\.rawValue).joined(separator: ", ")
            return BlockResult(entries: ids.map { Self.entryReport(p, $0, at: w.now) },
                               message: "Blocked \(names). It holds for at least \(SpanWords.describe(p.knobs.cooldown)) before it can be undone.",
                               now: w.now)
        }
    }

    /// `scrolloff unblock ENTRY…`: refused while any named block's cooldown runs (SPEC §3); the
    /// refusal is recorded as an `editRefused` event so insights can count rules that held.
    public func unblock(_ words: [String], profile: String = HelperEngine.defaultProfile) throws(EngineError) -> BlockResult {
        let resolved = try resolve(words)
        do throws(EngineError) {
            return try perform { (w: inout Work) throws(EngineError) -> BlockResult in
                let i = try profileIndex(profile, in: w.profiles)
                var p = w.profiles[i]
                var removed: [EntryID] = []
                for (id, _) in resolved {
                    guard let block = p.blocks.first(where: { $0.entry == id }) else { continue }
                    do throws(Refusal) { try ChangeRules.checkUnblock(block, at: w.now) } catch { throw .refused(error) }
                    p.blocks.removeAll { $0.entry == id }
                    w.change.append(.removeBlock(profile: p.name, id))
                    removed.append(id)
                    // An entry no rule names any more leaves the profile (and a custom domain the matcher).
                    if !p.namedEntriesOfRules(at: w.now).contains(id), p.entries.contains(where: { $0.id == id }) {
                        p.entries.removeAll { $0.id == id }
                        w.change.append(.removeEntry(profile: p.name, id))
                    }
                }
                guard !removed.isEmpty else {
                    throw .refused(Refusal(rule: .notBlocked, subject: resolved.map(\.0.rawValue).joined(separator: ","),
                                           message: "\(resolved.map(\.0.rawValue).joined(separator: ", ")) had no around-the-clock block to remove."))
                }
                w.profiles[i] = p
                return BlockResult(entries: removed.map { Self.entryReport(p, $0, at: w.now) },
                                   message: "Unblocked \(removed.map(\.rawValue).joined(separator: ", ")). Schedules that name them still apply.",
                                   now: w.now)
            }
        } catch {
            try recordRefusal(error, profile: profile, action: "unblock")
            throw error
        }
    }

    /// Keeps a cooldown or edit-lock refusal as an `editRefused` event (SPEC §2, §3), coalesced
    /// like refused bypasses (`recordRefused`). Recording never replaces the refusal.
    func recordRefusal(_ error: EngineError, profile: String, action: String) throws(EngineError) {
        recordRefused(error, profile: profile, action: action, kind: .editRefused)
    }

    // MARK: Schedules

    /// `scrolloff schedule add NAME …` (SPEC §2, §13). A new name adds a schedule (cooldown starts);
    /// an existing name edits it, checked against the curfew edit lock and, when the edit weakens
    /// it, the cooldown (SPEC §3).
    public func addSchedule(_ request: ScheduleRequest, profile: String = HelperEngine.defaultProfile) throws(EngineError) -> ScheduleReport {
        let start: LocalTime, end: LocalTime, days: Weekdays
        do {
            start = try LocalTime.parse(request.from)
            end = try LocalTime.parse(request.to)
            days = try Weekdays.parse(request.days)
        } catch { throw .invalid(error.message) }
        let name = request.name.trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty else { throw .invalid("Give the schedule a name, such as “evenings”.") }
        let entries = request.strict && request.entries.isEmpty ? [] : try resolve(request.entries)
        do throws(EngineError) {
            return try perform { (w: inout Work) throws(EngineError) -> ScheduleReport in
                let i = try profileIndex(profile, in: w.profiles)
                var p = w.profiles[i]
                let kind: Schedule.Kind = request.strict ? .strictCurfew : (request.curfew ? .curfew : .block)
                let new = Schedule(name: name, start: start, end: end, days: days, timeZoneID: p.settings.timeZoneID,
                                   entries: Set(entries.map(\.0)), kind: kind, reason: request.reason)
                let saved: Schedule
                do throws(Refusal) {
                    if let old = p.schedules.first(where: { $0.name == name }) {
                        var edited = new
                        edited.reason = request.reason ?? old.reason
                        saved = try ChangeRules.edit(from: old, to: edited, at: w.now, cooldown: p.knobs.cooldown)
                    } else {
                        saved = try ChangeRules.add(new, at: w.now, cooldown: p.knobs.cooldown)
                    }
                    // The 16 h cap holds for curfews that join up too (SPEC §2).
                    do throws(ScheduleError) {
                        try CurfewJoin.check(p.schedules.filter { $0.name != name } + [saved], involving: name, at: w.now)
                    } catch { throw error.refusal }
                } catch { throw .refused(error) }
                for (id, kind) in entries where !p.entries.contains(where: { $0.id == id }) {
                    let entry = StoredEntry(id: id, kind: kind, added: w.now)
                    p.entries.append(entry)
                    w.change.append(.saveEntry(profile: p.name, entry))
                }
                p.schedules.removeAll { $0.name == name }
                p.schedules.append(saved)
                p.schedules.sort { $0.name < $1.name }
                w.change.append(.saveSchedule(profile: p.name, saved))
                w.profiles[i] = p
                return ScheduleReport(saved, at: w.now)
            }
        } catch {
            try recordRefusal(error, profile: profile, action: "schedule edit")
            throw error
        }
    }

    /// `scrolloff schedule list`.
    public func schedules(profile: String = HelperEngine.defaultProfile) throws(EngineError) -> [ScheduleReport] {
        let now = advanceClock()
        let p = profiles[try profileIndex(profile, in: profiles)]
        return p.schedules.map { ScheduleReport($0, at: now) }
    }

    /// `scrolloff schedule rm NAME`: refused inside a curfew's edit lock and inside the cooldown.
    public func removeSchedule(_ name: String, profile: String = HelperEngine.defaultProfile) throws(EngineError) {
        do throws(EngineError) {
            try perform { (w: inout Work) throws(EngineError) in
                let i = try profileIndex(profile, in: w.profiles)
                guard let s = w.profiles[i].schedules.first(where: { $0.name == name }) else {
                    throw .notFound("There is no schedule “\(name)”; `scrolloff schedule list` shows them.")
                }
                do throws(Refusal) { try ChangeRules.checkDelete(s, at: w.now) } catch { throw .refused(error) }
                w.profiles[i].schedules.removeAll { $0.name == name }
                w.change.append(.removeSchedule(profile: w.profiles[i].name, name: name))
            }
        } catch {
            try recordRefusal(error, profile: profile, action: "schedule rm")
            throw error
        }
    }

    // MARK: Focus

    /// `scrolloff focus DURATION [--entries A,B]` (SPEC §2): a one-off block window from now.
    /// Without entries it covers every entry the profile names.
    public func focus(length: Span, entries words: [String] = [], reason: String? = nil,
                      profile: String = HelperEngine.defaultProfile) throws(EngineError) -> FocusReport {
        let resolved = words.isEmpty ? [] : try resolve(words)
        return try perform { (w: inout Work) throws(EngineError) -> FocusReport in
            let i = try profileIndex(profile, in: w.profiles)
            var p = w.profiles[i]
            let ids = resolved.isEmpty ? Set(p.namedEntries(at: w.now)) : Set(resolved.map(\.0))
            guard !ids.isEmpty else {
                throw .invalid("A focus session needs entries: block something first, or name them with --entries instagram,tiktok.")
            }
            let id = (p.focusSessions.map(\.id).max() ?? 0) + 1
            let session: FocusSession
            do throws(ScheduleError) { session = try FocusSession(id: id, entries: ids, startingAt: w.now, length: length, reason: reason) } catch {
                throw .invalid(error.message)
            }
            for (eid, kind) in resolved where !p.entries.contains(where: { $0.id == eid }) {
                let entry = StoredEntry(id: eid, kind: kind, added: w.now)
                p.entries.append(entry)
                w.change.append(.saveEntry(profile: p.name, entry))
            }
            p.focusSessions.append(session)
            w.change.append(.saveFocusSession(profile: p.name, session))
            w.profiles[i] = p
            return FocusReport(id: id, entries: ids.sorted().map(\.rawValue), start: session.start, end: session.end, reason: reason)
        }
    }

    // MARK: Profiles

    /// `scrolloff profile add NAME --clients CIDR,…` (SPEC §9): a profile of its own with its own
    /// entries, schedules and wallet (and its own starter credit). Adding an existing name updates
    /// its clients.
    public func addProfile(_ name: String, clients: [String], timeZoneID: String? = nil, preset: Preset? = nil) throws(EngineError) -> [String] {
        let networks = try ClientNetwork.networks(in: clients)
        guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
            throw .invalid("“\(name)” cannot be a profile name; use letters, digits, - and _.")
        }
        return try perform { (w: inout Work) throws(EngineError) -> [String] in
            // A client belongs to one profile: the same network or MAC in two would route by
            // whichever sorts first, which nobody chose.
            let mine = Set(ClientKey.keys(clients))
            for other in w.profiles where other.name != name {
                let shared = ClientKey.keys(other.settings.clientCIDRs).filter { mine.contains($0) }
                if let first = shared.first {
                    throw .invalid("\(first) is already a client of profile \(other.name), so profile \(name) cannot claim it too; "
                        + "remove it from \(other.name) first (a client belongs to one profile).")
                }
            }
            if let i = w.profiles.firstIndex(where: { $0.name == name }) {
                w.profiles[i].settings.clientCIDRs = clients
                w.profiles[i].networks = networks
                w.change.append(.saveProfile(w.profiles[i].settings))
            } else {
                let zone = timeZoneID ?? w.profiles.first?.settings.timeZoneID ?? ProfileRuntime.systemTimeZoneID
                let settings = ProfileSettings(name: name, clientCIDRs: clients, timeZoneID: zone,
                                               preset: preset ?? w.profiles.first?.settings.preset ?? .default)
                var p = try ProfileRuntime.fresh(settings, now: w.now)
                w.change.append(.saveProfile(settings))
                let starter = p.account.grantStarter(at: w.now)
                w.change.record(starter, account: p.account.state, profile: name)
                w.profiles = Self.ordered(w.profiles + [p])
            }
            return w.profiles.map(\.name)
        }
    }

    /// `scrolloff profile list`: names and client networks, default profile first.
    /// Which uids may act on which profile (SPEC §11), for the control server's SO_PEERCRED check.
    /// An empty list means the profile names no owner: members of the `scrolloff` group may act on it.
    public func profileOwners() -> [String: [UInt32]] {
        Dictionary(uniqueKeysWithValues: profiles.map { ($0.name, $0.settings.ownerUIDs) })
    }

    /// Owners and members of every profile, by name (SPEC §11 roles).
    public func profileAccess() -> [String: ProfileAccess] {
        Dictionary(uniqueKeysWithValues: profiles.map { ($0.name, ProfileAccess(owners: $0.settings.ownerUIDs, members: $0.settings.memberUIDs)) })
    }

    public func profileList() -> [(name: String, clients: [String])] {
        profiles.map { ($0.name, $0.settings.clientCIDRs) }
    }

    // MARK: Helpers

    static func entryReport(_ p: ProfileRuntime, _ id: EntryID, at t: Instant) -> EntryReport {
        let rules = p.rules
        let status = rules.status(of: id, at: t)
        var openUntil: Instant?
        if case .open(let until) = status.state { openUntil = until }
        return EntryReport(id: id.rawValue, state: status.state.name, lockedUntil: rules.lockedUntil(of: id, at: t),
                           reason: status.reason, nextChange: status.nextChange, openUntil: openUntil,
                           nextState: status.nextState?.name, reasons: status.reasons)
    }
}

/// The canonical form of a profile client, to find one claimed twice: a network as `address/len`
/// with the host bits kept as written, a MAC in lower case with colons.
package enum ClientKey {
    package static func keys(_ clients: [String]) -> [String] {
        clients.map { text in
            if let mac = MACAddress.parse(text) { return MACAddress.describe(mac) }
            return (try? ClientNetwork(parsing: text)).map(\.description) ?? text
        }
    }
}
