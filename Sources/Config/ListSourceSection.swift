import ControlServer
import Engine
import ListFetch

/// One `[[lists.source]]`: a downloaded list, checked by the same rules as `scrolloff lists add`
/// (`ListSourceNaming`, `ListName`), so a list accepted here would be accepted there.
enum ListSourceSection {
    /// - Parameter seenNames: list name → URL of the sources read so far, to refuse a name twice.
    static func read(_ t: TableReader, seenNames: inout [String: String]) -> ConfiguredListSource? {
        let urlKey = ListKeys.sourceURL, nameKey = ListKeys.sourceName
        // Both read first, so that neither is reported as unknown when the other is wrong.
        let url = t.string(urlKey)
        let written = t.string(nameKey)
        guard let url else {
            if !t.has(urlKey) { t.report(urlKey, "is missing; every [[\(SettingSection.listsSource.rawValue)]] needs one") }
            return nil
        }
        let parsed: ListSourceURL
        do {
            parsed = try ListSourceNaming.validate(url)
        } catch {
            t.report(urlKey, "is \"\(url)\": \(error.error.message)")
            return nil
        }
        let name: ListName
        if let written {
            do {
                name = try ListName(written)
            } catch {
                t.report(nameKey, "is \"\(written)\"")
                return nil
            }
        } else if t.has(nameKey) {
            return nil // of the wrong type, reported
        } else {
            guard let derived = try? ListName(ListSourceNaming.derivedName(from: parsed)) else {
                t.report(nameKey, "is missing and cannot be derived from \"\(url)\"")
                return nil
            }
            name = derived
        }
        if let other = seenNames[name.rawValue] {
            t.report(nameKey, "is \"\(name)\", already the name of \(other)", allowed: "a name used by one [[lists.source]] only")
            return nil
        }
        if seenNames.values.contains(url) {
            t.report(urlKey, "is \"\(url)\" a second time", allowed: "each URL once")
            return nil
        }
        seenNames[name.rawValue] = url
        return ConfiguredListSource(name: name.rawValue, url: url)
    }
}
