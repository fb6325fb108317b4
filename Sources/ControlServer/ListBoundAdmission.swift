import ListFetch

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
