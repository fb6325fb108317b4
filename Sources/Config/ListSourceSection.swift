import ControlServer
import Engine
import ListFetch

/// One `[[lists.source]]`: a downloaded list, checked by the same rules as `scrolloff lists add`
/// (`ListSourceNaming`, `ListName`), so a list accepted here would be accepted there.
enum ListSourceSection {
    static let urlAllowed = "an http://, https:// or file:/// URL, such as \"https://example.org/hosts.txt\""

    /// - Parameter seenNames: list name → URL of the sources read so far, to refuse a name twice.
    static func read(_ t: TableReader, seenNames: inout [String: String]) -> ConfiguredListSource? {
        let nameAllowed = "1 to 64 of a-z 0-9 . - _, starting with a letter or digit; leave it out to name the list after its host"
        // Both read first, so that neither is reported as unknown when the other is wrong.
        let url = t.string("url", allowed: urlAllowed)
        let written = t.string("name", allowed: nameAllowed)
        guard let url else {
            if !t.has("url") { t.report("url", "is missing; every [[lists.source]] needs one", allowed: urlAllowed) }
            return nil
        }
        let parsed: ListSourceURL
        do {
            parsed = try ListSourceNaming.validate(url)
        } catch {
            t.report("url", "is \"\(url)\": \(error.error.message)", allowed: urlAllowed)
            return nil
        }
        let name: ListName
        if let written {
            do {
                name = try ListName(written)
            } catch {
                t.report("name", "is \"\(written)\"", allowed: nameAllowed)
                return nil
            }
        } else if t.has("name") {
            return nil // of the wrong type, reported
        } else {
            guard let derived = try? ListName(ListSourceNaming.derivedName(from: parsed)) else {
                t.report("name", "is missing and cannot be derived from \"\(url)\"", allowed: nameAllowed)
                return nil
            }
            name = derived
        }
        if let other = seenNames[name.rawValue] {
            t.report("name", "is \"\(name)\", already the name of \(other)", allowed: "a name used by one [[lists.source]] only")
            return nil
        }
        if seenNames.values.contains(url) {
            t.report("url", "is \"\(url)\" a second time", allowed: "each URL once")
            return nil
        }
        seenNames[name.rawValue] = url
        return ConfiguredListSource(name: name.rawValue, url: url)
    }
}
