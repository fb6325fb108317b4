import ListFetch
import ScrollOffCore

/// The household's bound on what its lists may hold in all: how many names are in force across
/// every list (added, the configuration file's, another helper's) and how many lists there are.
/// The 64 MiB cap of one download (`FetchPolicy.defaultMaxBytes`) bounds a list, not their sum:
/// without this, whoever may edit any profile could add list after list until the helper's memory
/// (and the household's DNS with it) ran out on a small router.
///
/// The defaults follow what a 512 MB router holds: the matcher keeps about 30 bytes per name
/// (docs/benchmarks.md), and putting a list in force briefly needs about twice that again (the
/// parse beside the matcher it replaces); 2,000,000 names is some 60 MB steady, about 130 MB at a
/// refresh's peak, which leaves the rest to the system. The largest public lists have about
/// 1,000,000 names, so the bound still takes two of them beside a curated set.
public struct ListBound: Sendable, Equatable {
    public static let defaultMaxNames = 2_000_000
    public static let defaultMaxLists = 32

    /// Most names in force across every list, held names included (`[lists] max_names`).
    public var maxNames: Int
    /// Most lists the household may have (`[lists] max_lists`).
    public var maxLists: Int

    public init(maxNames: Int = ListBound.defaultMaxNames, maxLists: Int = ListBound.defaultMaxLists) {
        self.maxNames = maxNames
        self.maxLists = maxLists
    }

    /// Names in force in `lists` other than `name`: each copy's names and the names a rule holds.
    public static func namesInForce(_ lists: [ListMetadata], besides name: ListName) -> Int {
        lists.reduce(0) { sum, meta in
            guard meta.name != name, meta.hasCopy else { return sum }
            return sum + (meta.entryCount ?? 0) + (meta.held?.count ?? 0)
        }
    }

    /// Refuses one more list when `existing` lists are already the bound.
    public func checkNewList(_ name: ListName, existing: Int) throws(ListBoundExceeded) {
        guard existing + 1 > maxLists else { return }
        throw ListBoundExceeded(
            "\(CountWords.grouped(existing)) lists are in force, the household's bound of \(CountWords.grouped(maxLists)) ([lists] max_lists); "
                + "list '\(name)' was not added and nothing else changed. \(Self.remedy)")
    }

    /// Refuses a copy of `name` with `names` names when, beside the `elsewhere` names of the other
    /// lists (and `held` names of its own), it would pass the bound. `replacing`: a refresh, whose
    /// previous copy stays in force; otherwise an add, which keeps nothing.
    public func checkNames(_ name: ListName, names: Int, held: Int = 0, elsewhere: Int, replacing: Bool) throws(ListBoundExceeded) {
        // Saturating: a hostile count can never wrap the sum below the bound.
        let (own, o1) = names.addingReportingOverflow(held)
        let (total, o2) = own.addingReportingOverflow(elsewhere)
        guard o1 || o2 || total > maxNames else { return }
        let shown = o1 || o2 ? "more than \(CountWords.grouped(Int.max))" : CountWords.grouped(total)
        let what = replacing ? "the new copy of list '\(name)'" : "list '\(name)'"
        let outcome = replacing ? "The new copy was not used; the previous copy stays in force." : "It was not added; the lists in force are unchanged."
        throw ListBoundExceeded(
            "\(CountWords.grouped(elsewhere)) names are in force in the other lists; \(what) has \(CountWords.grouped(names)), "
                + "\(shown) in all, above the household's bound of \(CountWords.grouped(maxNames)) names ([lists] max_names). "
                + "\(outcome) \(Self.remedy)")
    }

    static let remedy = "Remove a list you need less (`scrolloff lists rm NAME`), or root raises [lists] max_names or max_lists "
        + "in the configuration file if this machine has the memory (about 60 bytes a name)."
}

/// A list change refused by the household's bound (`ListBound`); the message gives the numbers.
public struct ListBoundExceeded: Error, Sendable, Equatable {
    public let message: String
    init(_ message: String) { self.message = message }
}
