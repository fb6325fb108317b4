import DomainLists
import ListFetch
import ScrollOffCore

/// Knobs of the downloaded lists.
public struct ListsConfiguration: Sendable {
    /// When each list is refreshed; the period defaults to 24 h (issue 4).
    public var refreshPlan: RefreshPlan
    /// Bad lines a source may carry before an update is rejected (default 5 per 1,000).
    public var badLineBudget: BadLineBudget
    public var fetchPolicy: FetchPolicy

    public init(refreshPlan: RefreshPlan = RefreshPlan(), badLineBudget: BadLineBudget = .default, fetchPolicy: FetchPolicy = FetchPolicy()) {
        self.refreshPlan = refreshPlan
        self.badLineBudget = badLineBudget
        self.fetchPolicy = fetchPolicy
    }

    /// A configuration with only the refresh period changed.
    public static func refreshing(every period: Span) -> ListsConfiguration {
        ListsConfiguration(refreshPlan: RefreshPlan(period: period))
    }
}

/// What the rest of the helper needs to know about the downloaded lists after a change.
public struct ListsSnapshot: Sendable, Equatable {
    public struct ActiveList: Sendable, Equatable {
        public var name: String
        public var url: String
        /// The copy in force (absent until the first good download).
        public var copyPath: String?
        public var entryCount: Int?
        /// Where names a refresh dropped while a rule held the list lie: in force with the copy
        /// whenever the file exists (SPEC §3). Given with every copy, the file there or not.
        public var heldPath: String?
    }

    public var lists: [ActiveList]
    /// Hosts of the configured list URLs (and of a URL being added right now): always allowed, so
    /// the helper never blocks its own updates (SPEC §1).
    public var allowedHosts: [String]
    /// The snapshot's place in the controller's order (later = newer). Observers may finish out of
    /// order (a refresh's parse waits for idle CPU, a person's does not), so the engine drops a
    /// snapshot older than one it was already handed (`HelperEngine.setLists(order:)`).
    public var sequence = 0
}
