import DomainLists
import Foundation
import ScrollOffCore
import Store

/// A configured list source as `lists list` shows it (SPEC §13).
public struct ListSourceReport: Hashable, Sendable, Codable {
    public var name: String
    public var url: String
    public var added: Instant
    public var enabled: Bool
    /// Whether a fetched copy is in force (`setLists` included it).
    public var inForce: Bool
}

extension HelperEngine {
    /// `scrolloff lists add URL [--name NAME]`: records the source; its host becomes always
    /// allowed at once (SPEC §1), so blocking can never cut off its own list updates. Fetching is
    /// the list refresh's job; it calls `setLists` with what it fetched.
    public func addListSource(url: String, name: String? = nil) throws(EngineError) -> ListSourceReport {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
              scheme == "https" || scheme == "http", let host = components.host, !host.isEmpty else {
            throw .invalid("“\(url)” is not an http(s) URL; write it like https://example.org/list.txt.")
        }
        // Named after its host with dashes by default, so the name never reads as a domain to block.
        let chosen = (name ?? host.replacingOccurrences(of: ".", with: "-")).lowercased()
        guard !chosen.isEmpty, chosen.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
            throw .invalid("“\(chosen)” cannot name a list; use letters, digits, '-' and '_' (a dot would read as a domain).")
        }
        guard catalog.service(id: chosen) == nil else {
            throw .invalid("“\(chosen)” is already a service of the catalog; pick another --name.")
        }
        let now = advanceClock()
        let source = ListSource(name: chosen, url: url, added: listSources.first { $0.name == chosen }?.added ?? now)
        _ = try commitReturning(StateChange([.saveListSource(source)]), now: now)
        listSources.removeAll { $0.name == chosen }
        listSources.append(source)
        listSources.sort { $0.name < $1.name }
        rebuild(now: now)
        return report(source)
    }

    /// Parses fetched list copies (name → file path) for `setLists`, off the engine so that a large
    /// list never holds up commands. A list over its bad-line budget is left out and reported; the
    /// caller keeps its previous copy in force (ARCHITECTURE principle 5).
    public nonisolated static func parseLists(files: [String: String]) -> (lists: [String: RuleList], failures: [String: String]) {
        var lists: [String: RuleList] = [:]
        var failures: [String: String] = [:]
        for (name, path) in files {
            do { lists[name] = try ListParser.parse(contentsOfFile: path).rules } catch { failures[name] = error.description }
        }
        return (lists, failures)
    }

    /// `scrolloff lists rm NAME`.
    public func removeListSource(_ name: String) throws(EngineError) {
        let name = name.lowercased()
        guard listSources.contains(where: { $0.name == name }) else {
            throw .notFound("There is no list “\(name)”; `scrolloff lists list` shows them.")
        }
        let now = advanceClock()
        _ = try commitReturning(StateChange([.removeListSource(name: name)]), now: now)
        listSources.removeAll { $0.name == name }
        lists[name] = nil
        listGeneration += 1
        rebuild(now: now)
    }

    /// `scrolloff lists list`, by name.
    public func listSourceList() -> [ListSourceReport] { listSources.map(report) }

    /// The configured sources, for the list refresh to fetch.
    public func configuredListSources() -> [ListSource] { listSources.filter(\.enabled) }

    private func report(_ s: ListSource) -> ListSourceReport {
        ListSourceReport(name: s.name, url: s.url, added: s.added, enabled: s.enabled, inForce: lists[s.name] != nil)
    }

    /// Which uids may act on which profile (SPEC §11), for the control server's SO_PEERCRED check.
    /// An empty list means the profile names no owner: members of the `scrolloff` group may act on it.
    public func profileOwners() -> [String: [UInt32]] {
        Dictionary(uniqueKeysWithValues: profiles.map { ($0.name, $0.settings.ownerUIDs) })
    }
}
