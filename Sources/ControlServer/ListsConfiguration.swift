import DomainLists
import Engine
import ListFetch
import ScrollOffCore

/// Knobs of the downloaded lists.
public struct ListsConfiguration: Sendable {
    /// When each list is refreshed; the period defaults to 24 h (SPEC §1).
    public var refreshPlan: RefreshPlan
    /// Bad lines a source may carry before an update is rejected (default 5 per 1,000).
    public var badLineBudget: BadLineBudget
    public var fetchPolicy: FetchPolicy
    /// Who may add which sources; the configuration sets them at start and reload.
    public var sourceRules: ListSourceRules
    /// How much every list together may hold (`[lists] max_names`, `max_lists`), whoever adds.
    public var bound: ListBound

    public init(refreshPlan: RefreshPlan = RefreshPlan(), badLineBudget: BadLineBudget = .default, fetchPolicy: FetchPolicy = FetchPolicy(),
                sourceRules: ListSourceRules = ListSourceRules(), bound: ListBound = ListBound()) {
        self.refreshPlan = refreshPlan
        self.badLineBudget = badLineBudget
        self.fetchPolicy = fetchPolicy
        self.sourceRules = sourceRules
        self.bound = bound
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

/// Who may add which list sources, from `[lists] member_file_folders` and
/// `[lists] allow_private_hosts`. Root, the helper's own user and the configuration file may name
/// any file and any host; a group member only a file under `memberFolders` that they may read
/// themselves, and only a public http(s) server unless `allowedPrivate` names its address.
public struct ListSourceRules: Sendable, Equatable {
    /// Plain absolute folders (no `.` or `..`, no symbolic link on the way).
    public var memberFolders: [String]
    public var allowedPrivate: [AddressNetwork]

    public init(memberFolders: [String] = [], allowedPrivate: [AddressNetwork] = []) {
        self.memberFolders = memberFolders
        self.allowedPrivate = allowedPrivate
    }

    /// What a source added by `adder` may read and reach. Root and `helperUID` are administrators;
    /// anyone else is read with their uid, primary group and the groups the group database gives
    /// them now (a membership taken away since the list was added counts no more).
    public func access(for adder: SourceAdder, helperUID: UInt32) -> SourceAccess {
        if adder.uid == 0 || adder.uid == helperUID {
            return SourceAccess(memberFolders: memberFolders, allowedPrivate: allowedPrivate)
        }
        let groups = SystemGroups.groups(ofUID: adder.uid, primary: adder.gid)
        return SourceAccess(reader: .init(uid: adder.uid, gid: adder.gid, groups: groups),
                            memberFolders: memberFolders, allowedPrivate: allowedPrivate)
    }

    /// What a source added through another helper of the household (`node`) may read and reach
    /// here: a member's rights whoever added it, since that helper's say-so is no administrator's
    /// on this machine. Root there reads as nobody here; anyone else with their uid and the groups
    /// this machine gives that uid, its primary group included: the group recorded there is that
    /// machine's number, which may name another group here (a private group of another user, or
    /// root's). A uid this machine has no user for reads as nobody.
    public func access(forSourceAddedThrough node: String, by adder: SourceAdder) -> SourceAccess {
        let reader = adder.uid == 0 ? SourceAdder.unknown
            : SystemGroups.primaryGroup(ofUID: adder.uid).map { SourceAdder(uid: adder.uid, gid: $0) } ?? SourceAdder.unknown
        var access = SourceAccess(reader: .init(uid: reader.uid, gid: reader.gid, groups: SystemGroups.groups(ofUID: reader.uid, primary: reader.gid)),
                                  memberFolders: memberFolders, allowedPrivate: allowedPrivate)
        access.addedThrough = node
        return access
    }
}
