import ListFetch
import ScrollOffCore

extension ListsController {
    /// Puts `[lists] max_names` and `max_lists` in force (start and reload). Lists already in force
    /// stay when it is lowered below them; the next add or refresh that grows them is refused.
    public func setBound(_ bound: ListBound) { self.bound = bound }

    /// The household's bound (`ListBound`, `[lists] max_names`) asked before a new copy of `name`
    /// replaces the one in force: by `lists add`, a refresh, and the first download of a list the
    /// configuration file or another helper names. A refusal keeps the copy in force and is
    /// recorded with the list (`lists list`, `doctor`), as any failed refresh is.
    func admission(for name: ListName) -> ListAdmission {
        { (count: Int) async throws(ListFetchError) -> Void in try await self.admit(name, names: count) }
    }

    private func admit(_ name: ListName, names: Int) async throws(ListFetchError) {
        let all = await store.allMetadata()
        let own = all.first { $0.name == name }
        // A first copy of a list another helper added counts against this helper's own
        // `max_lists` too: that helper's bound may be larger, and the copies are held here.
        // (`lists add` asked the household's count before its download; the file's sources are root's.)
        if own?.hasCopy != true, configured[name] == nil, adding[name] == nil {
            let here = Set(all.filter(\.hasCopy).map(\.name)).union(configured.keys).union(admitted.keys).subtracting([name])
            guard here.count < bound.maxLists else {
                throw .overBound(name: name.rawValue, reason: "\(CountWords.grouped(here.count)) lists are held on this helper, its bound of "
                    + "\(CountWords.grouped(bound.maxLists)) ([lists] max_lists); the household's list '\(name)' is not fetched here, "
                    + "so it blocks nothing on this helper. \(ListBound.remedy)")
            }
        }
        let pending = admitted.reduce(0) { sum, entry in entry.key == name ? sum : sum &+ entry.value }
        let elsewhere = ListBound.namesInForce(all, besides: name) &+ pending
        do throws(ListBoundExceeded) {
            try bound.checkNames(name, names: names, held: own?.held?.count ?? 0, elsewhere: elsewhere,
                                             replacing: own?.hasCopy ?? false)
        } catch {
            throw .overBound(name: name.rawValue, reason: error.message)
        }
        admitted[name] = names
    }
}
