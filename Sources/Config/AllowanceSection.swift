import DomainLists
import Engine
import Foundation
import ScrollOffCore

/// `[[allowances]]` (SPEC §4a): each table gives one profile `amount` a day on `days` for
/// `entries`, in the words of `scrolloff allowance set`. Tables for the same profile and entries
/// are combined into one allowance (`1h` on weekdays in one, `2h` at weekends in another); a day
/// two of them give is refused, since which amount was meant cannot be told.
enum AllowanceSection {
    /// The longest entry word: a domain name's 253 characters.
    static let longestEntry = 253

    /// Returns the entry words that are not domains, with their paths, for `checkEntries`.
    static func read(_ root: TableReader, into configuration: inout HelperConfiguration) -> [(word: String, path: String)] {
        var names: [(word: String, path: String)] = []
        let profiles = ["default"] + configuration.profiles.map(\.name)
        var combined: [ConfiguredAllowance] = []
        // Where each day of each allowance was given, for the message about a day given twice.
        var givenAt: [String: String] = [:]
        for t in root.tables(.allowances) {
            defer { t.finish() }
            var valid = true
            let profile = t.string(AllowanceKeys.profile) ?? "default"
            if t.has(AllowanceKeys.profile), !profiles.contains(profile) {
                t.report(AllowanceKeys.profile, "is \"\(profile)\", which no [[profiles]] table names")
                valid = false
            }
            var entries: [String] = []
            if let items = t.strings(AllowanceKeys.entries) {
                for item in items {
                    let word = item.value.lowercased()
                    guard Self.isEntryWord(word) else {
                        t.log.report(item.path, "is \"\(item.value.prefix(80))\", which is not a service, category, list or domain name",
                                     allowed: AllowanceKeys.entries.allowed)
                        valid = false
                        continue
                    }
                    entries.append(word)
                    if !word.contains(".") { names.append((word, item.path)) }
                }
                if items.count != t.array(AllowanceKeys.entries.key, allowed: AllowanceKeys.entries.allowed)?.count { valid = false }
                if items.count > Allowance.mostEntries {
                    t.report(AllowanceKeys.entries, "names \(items.count) entries; an allowance names at most \(Allowance.mostEntries) (a category such as \"social\" covers many)")
                    valid = false
                }
            } else if t.has(AllowanceKeys.entries) {
                valid = false
            }
            entries = Array(Set(entries)).sorted()
            let amount = t.duration(AllowanceKeys.amount)
            if amount == nil {
                if !t.has(AllowanceKeys.amount) { t.report(AllowanceKeys.amount, "is missing; every [[allowances]] needs one, such as amount = \"1h\"") }
                valid = false
            }
            var days = Weekdays.daily
            if let text = t.string(AllowanceKeys.days) {
                do throws(ScheduleError) { days = try Weekdays.parse(text) } catch {
                    t.report(AllowanceKeys.days, "is \"\(text.prefix(80))\": \(error.message)")
                    valid = false
                }
            }
            guard valid, let amount else { continue }
            let key = "\(profile)|\(entries.joined(separator: ","))"
            var index = combined.firstIndex { $0.profile == profile && $0.entries == entries }
            if index == nil {
                combined.append(ConfiguredAllowance(profile: profile, entries: entries, secondsByWeekday: Array(repeating: 0, count: 7)))
                index = combined.count - 1
            }
            for n in 0..<7 where days.contains(.day(number: n)) {
                let day = "\(key)|\(n)"
                if let earlier = givenAt[day] {
                    t.report(AllowanceKeys.days, "gives \(Weekdays.day(number: n).description) to profile \(profile) for "
                                 + "\(entries.isEmpty ? "any entry" : entries.joined(separator: ", ")) again; \(earlier) already does. Give each day once")
                    continue
                }
                givenAt[day] = t.path
                combined[index!].secondsByWeekday[n] = amount.wholeSeconds
            }
        }
        configuration.allowances = combined
        return names
    }

    /// Each name an allowance gives (not a domain) must be a curated service, a category or a
    /// `[[lists.source]]` of the file, as `scrolloff allowance set` resolves it; a misspelt
    /// "youtub" is refused here rather than stopping the helper at start. Without a catalog to
    /// read, the helper's start says so itself, so nothing is reported here.
    static func checkEntries(_ names: [(word: String, path: String)], catalog: String?, lists: [String], log: ProblemLog) {
        guard !names.isEmpty,
              let folder = try? CatalogLocation.find(explicit: catalog, environment: ProcessInfo.processInfo.environment,
                                                     executablePath: CatalogLocation.currentExecutablePath()),
              let known = try? Catalog.load(folder: folder)
        else { return }
        let words = known.services.map(\.id) + ServiceCategory.allCases.map(\.rawValue) + lists.map { $0.lowercased() }
        for (word, path) in names where known.resolve(word) == nil && !lists.contains(where: { $0.lowercased() == word }) {
            var problem = "is \"\(word)\", which is not a curated service, a category or a [[lists.source]] name"
            if let near = ConfigurationSchema.nearest(word, among: words) { problem += " (did you mean \(near)?)" }
            log.report(path, problem, allowed: AllowanceKeys.entries.allowed + "; `scrolloff services` lists the services")
        }
    }

    /// A service, category or list name (letters, digits, - and _) or a domain (with dots): what
    /// `scrolloff allowance set --entries` takes. Whether a service or list of that name exists is
    /// checked against the catalog and the file's lists after the flags (`checkEntries`).
    static func isEntryWord(_ word: String) -> Bool {
        !word.isEmpty && word.utf8.count <= longestEntry && !word.hasPrefix(".") && !word.hasSuffix(".") && !word.contains("..")
            && word.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || "-_.".unicodeScalars.contains($0) }
    }
}
