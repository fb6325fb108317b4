/// What the household page keeps about the people using it (SPEC §9a), when several helpers share
/// one store (`[store] backend = "postgresql"`): owners' password hashes, browser sessions and the
/// sign-in waits per owner name. With it an owner signs in on one helper's page and the session
/// holds on the other's, a password set through one helper works on both, and the wait after
/// wrong passwords counts the tries made through either.
///
/// On SQLite (one helper) the page keeps these as before: the password file in the state folder
/// and the sessions and waits in memory; nothing here is used.
///
/// Times are the store's own clock (the database server's), in milliseconds: the helpers' clocks
/// may differ, and an idle limit or a wait must mean the same on both.
public protocol WebAccountStore: Sendable {
    /// `name`'s stored password record (`scrypt$N$r$p$salt$hash`), nil when none is set.
    func ownerPasswordRecord(name: String) throws(StoreError) -> String?
    /// The owners with a password, by name.
    func ownerPasswordNames() throws(StoreError) -> [String]
    /// Sets or replaces `name`'s record.
    func setOwnerPasswordRecord(name: String, record: String) throws(StoreError)

    /// The session `id` with its idle time restarted; nil when unknown or idle for `idleMilliseconds`
    /// or more (it is then deleted).
    func findWebSession(id: String, idleMilliseconds: Int64) throws(StoreError) -> WebSessionRecord?
    /// Stores a new session, first deleting `replacing` (a sign-in ends the session it replaces),
    /// the sessions idle for `idleMilliseconds`, and, past `maximumCount`, the least recently seen.
    func insertWebSession(_ record: WebSessionRecord, replacing: String?, idleMilliseconds: Int64, maximumCount: Int) throws(StoreError)
    /// Ends session `id` (sign-out).
    func deleteWebSession(id: String) throws(StoreError)
    /// Changes session `id` under a lock: `body` gets the record and the store's time; nil when
    /// there is no such session.
    func updateWebSession<T>(id: String, _ body: (inout WebSessionRecord, _ nowMilliseconds: Int64) -> T) throws(StoreError) -> T?
    /// How many sessions are stored.
    func webSessionCount() throws(StoreError) -> Int

    /// Changes `name`'s sign-in tries under a lock: `body` gets them (nil: none kept) and the
    /// store's time, and sets them (nil: forget the name). A new name first makes room: names left
    /// alone for `forgetAfterMilliseconds` go, then, past `maximumTracked`, the least recent names
    /// without a password.
    func updateSignInTries<T>(name: String, forgetAfterMilliseconds: Int64, maximumTracked: Int,
                              _ body: (inout SignInTries?, _ nowMilliseconds: Int64) -> T) throws(StoreError) -> T
}

/// One browser's session as stored (the page's `WebSession`).
public struct WebSessionRecord: Hashable, Sendable {
    public var id: String
    public var csrf: String
    /// The signed-in owner: name, uid and gid as the helper that signed them in resolved them.
    public var ownerName: String?
    public var ownerUID: UInt32?
    public var ownerGID: UInt32?
    public var flash: String?
    /// When this browser last opened the exercise page (store time, ms).
    public var exerciseStartedAt: Int64?

    public init(id: String, csrf: String, ownerName: String? = nil, ownerUID: UInt32? = nil, ownerGID: UInt32? = nil,
                flash: String? = nil, exerciseStartedAt: Int64? = nil) {
        self.id = id
        self.csrf = csrf
        self.ownerName = ownerName
        self.ownerUID = ownerUID
        self.ownerGID = ownerGID
        self.flash = flash
        self.exerciseStartedAt = exerciseStartedAt
    }
}

/// One name's sign-in tries as stored (the page's `SignInBackoff`), in store time (ms).
public struct SignInTries: Hashable, Sendable {
    /// Tries since the last right password.
    public var tries: Int
    /// No try before this.
    public var nextAt: Int64
    public var lastAt: Int64
    /// The name has a password: never dropped to make room.
    public var owner: Bool

    public init(tries: Int, nextAt: Int64, lastAt: Int64, owner: Bool) {
        self.tries = tries
        self.nextAt = nextAt
        self.lastAt = lastAt
        self.owner = owner
    }
}
