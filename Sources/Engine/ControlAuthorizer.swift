#if canImport(Glibc)
import Glibc
#endif
import ControlAPI

/// What a request does to a profile (SPEC §11): a member's rights are apart from an owner's.
public enum ProfileAction: String, Sendable, Hashable, CaseIterable {
    /// Read its state: status, wallet, stats, events, plans, requests.
    case view
    /// Act within its rules: use, peek, token, stop, exercises, plans and alternatives, focus
    /// (which only tightens).
    case spend
    /// Ask its owners for time.
    case ask
    /// Change its rules: block, unblock, schedules, lists.
    case edit
    /// Grant or take time (`adjust`) and answer requests for time.
    case grant
    /// Pause or resume the profile, set its daily allowances (SPEC §4a, §5a): an owner's tools over
    /// someone else's devices.
    case supervise

    /// The words a refusal uses for it.
    package var words: String {
        switch self {
        case .view: "view it"
        case .spend: "spend its credit"
        case .ask: "ask for time"
        case .edit: "change its rules"
        case .grant: "grant or take time and answer requests"
        case .supervise: "pause or resume it and set its daily allowances"
        }
    }
}

/// Who a profile lists (SPEC §11): owners may do everything; members may view, spend
/// and ask, not edit or grant.
public struct ProfileAccess: Sendable, Hashable {
    public var owners: [UInt32]
    public var members: [UInt32]

    public init(owners: [UInt32] = [], members: [UInt32] = []) {
        self.owners = owners
        self.members = members
    }
}

/// A person's role on one profile, however they were identified (a uid on the control socket,
/// a device or a sign-in on the household page). The one table of what each role may do.
public enum ProfileRole: String, Sendable, Hashable {
    case owner
    case member

    public func allows(_ action: ProfileAction) -> Bool {
        switch self {
        case .owner: true
        case .member: action == .view || action == .spend || action == .ask
        }
    }
}

/// Decides who may act on which profile (SPEC §11: "the caller's uid (SO_PEERCRED) decides which
/// profiles they may act on"), and how (SPEC §11: `ProfileAction`). `access` is what the profile
/// lists (`HelperEngine.profileAccess()`).
public protocol ControlAuthorizer: Sendable {
    func decide(_ caller: CallerIdentity, profile: String, access: ProfileAccess, action: ProfileAction) -> AuthorizationDecision
    /// Whether `caller` may create profiles and change which clients a profile covers. A member of
    /// the group who could claim their own address for a new profile would escape every rule of
    /// the profile that covers them (SPEC §9, §11), so this is for administrators only.
    func mayManageProfiles(_ caller: CallerIdentity) -> AuthorizationDecision
}

extension ControlAuthorizer {
    /// Root and the helper's own user.
    public func mayManageProfiles(_ caller: CallerIdentity) -> AuthorizationDecision {
        ProfileAdministration.decide(caller, helperUID: geteuid())
    }
}

/// Who may create profiles and change their clients: root and the helper's own user.
enum ProfileAdministration {
    static func decide(_ caller: CallerIdentity, helperUID: UInt32) -> AuthorizationDecision {
        if caller.uid == 0 || caller.uid == helperUID { return .allowed }
        let who = SystemGroups.userName(ofUID: caller.uid).map { "user '\($0)' (uid \(caller.uid))" } ?? "uid \(caller.uid)"
        return .denied(reason: "\(who) may not create profiles or change which devices a profile covers: only root can, "
            + "because moving a device to another profile changes which rules it follows. Ask an administrator to run "
            + "`sudo scrolloff profile add NAME --clients CIDR`.")
    }
}

public enum AuthorizationDecision: Sendable, Equatable {
    case allowed
    case denied(reason: String)
    /// Refused by the caller's role on the profile (SPEC §11): a member asking to edit or grant.
    /// The reason names the role, what it allows and who may; the wire carries rule `role`.
    case deniedByRole(reason: String)
}

/// Root and the helper's own user (a helper started with `make run` serves the user who started
/// it) own every profile. Anyone else may do everything on a profile that lists their uid as an
/// owner; what `ProfileRole.member` allows on one that lists them as a member; and on a profile
/// with no owners, when they are a member of group `scrolloff`, everything but granting time.
/// Everyone else is refused with a reason that says who may.
///
/// Membership counts the caller's primary group from SO_PEERCRED and the supplementary groups of
/// its user in the group database (getgrouplist), because SO_PEERCRED carries no supplementary
/// groups.
public struct GroupMembershipAuthorizer: ControlAuthorizer {
    public var groupName: String
    public var helperUID: UInt32

    public init(groupName: String = "scrolloff", helperUID: UInt32 = geteuid()) {
        self.groupName = groupName
        self.helperUID = helperUID
    }

    public func decide(_ caller: CallerIdentity, profile: String, access: ProfileAccess, action: ProfileAction) -> AuthorizationDecision {
        // Root is an owner of every profile.
        if caller.uid == 0 || caller.uid == helperUID { return .allowed }
        let who = SystemGroups.userName(ofUID: caller.uid).map { "user '\($0)' (uid \(caller.uid))" } ?? "uid \(caller.uid)"
        let owners = access.owners.map { uid in SystemGroups.userName(ofUID: uid).map { "'\($0)'" } ?? "uid \(uid)" }
        if access.owners.contains(caller.uid) { return .allowed }
        if access.members.contains(caller.uid) {
            if ProfileRole.member.allows(action) { return .allowed }
            let byWhom = owners.isEmpty ? "root" : "its owners (\(owners.joined(separator: ", ")))"
            let ask = action == .grant || action == .supervise ? "" : " or ask for time with `scrolloff ask 15m --note TEXT --profile \(profile)`"
            return .deniedByRole(reason: "\(who) is a member of profile '\(profile)': members may view it, spend its credit and ask for time, "
                + "but only \(byWhom) may \(action.words). Ask them\(ask).")
        }
        if !owners.isEmpty {
            return .denied(reason: "\(who) may not act on profile '\(profile)': it belongs to \(owners.joined(separator: ", ")). "
                + "Its owner or root can make the change, or pick your own profile with --profile NAME.")
        }
        let groupID = SystemGroups.groupID(named: groupName)
        if let groupID, caller.gid == groupID || SystemGroups.groups(ofUID: caller.uid, primary: caller.gid).contains(groupID) {
            // A profile with no owners is the group's own, to edit and use; but granting time to
            // it would let anyone in the group pay themselves, so that stays with root.
            guard action != .grant && action != .supervise else {
                return .deniedByRole(reason: "\(who) may not \(action.words) on profile '\(profile)': it names no owners, so only root may. "
                    + "An administrator can name owners with `owners = [UID]` for this profile in scrolloff.toml.")
            }
            return .allowed
        }
        let how = groupID == nil
            ? "This machine has no group '\(groupName)' yet: an administrator can create it with `sudo groupadd \(groupName)`"
            : "An administrator can add you with `sudo usermod -aG \(groupName) \(SystemGroups.userName(ofUID: caller.uid) ?? "USER")`, then log in again"
        return .denied(reason: "\(who) may not act on profile '\(profile)': only root and members of group '\(groupName)' may. \(how).")
    }

    /// How answers and events name a caller: the user name, or the uid when it has none.
    public static func name(of caller: CallerIdentity) -> String {
        if caller.uid == 0 { return "root" }
        return SystemGroups.userName(ofUID: caller.uid) ?? "uid \(caller.uid)"
    }

    public func mayManageProfiles(_ caller: CallerIdentity) -> AuthorizationDecision {
        ProfileAdministration.decide(caller, helperUID: helperUID)
    }
}

/// Thin wrappers over the reentrant group and password database calls.
package enum SystemGroups {
    package static func groupID(named name: String) -> UInt32? {
        var group = group()
        var result: UnsafeMutablePointer<group>?
        var buffer = [CChar](repeating: 0, count: 16 * 1024)
        let status = getgrnam_r(name, &group, &buffer, buffer.count, &result)
        guard status == 0, result != nil else { return nil }
        return group.gr_gid
    }

    static func userName(ofUID uid: UInt32) -> String? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16 * 1024)
        guard getpwuid_r(uid, &entry, &buffer, buffer.count, &result) == 0, result != nil, let name = entry.pw_name else { return nil }
        return String(cString: name)
    }

    /// The primary group the user database gives `uid` on this machine; nil when it has no such user.
    package static func primaryGroup(ofUID uid: UInt32) -> UInt32? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16 * 1024)
        guard getpwuid_r(uid, &entry, &buffer, buffer.count, &result) == 0, result != nil else { return nil }
        return entry.pw_gid
    }

    /// The supplementary groups of the user with `uid`, from the group database.
    package static func groups(ofUID uid: UInt32, primary: UInt32) -> [UInt32] {
        guard let name = userName(ofUID: uid) else { return [] }
        var count: Int32 = 64
        var groups = [gid_t](repeating: 0, count: Int(count))
        if getgrouplist(name, primary, &groups, &count) == -1 {
            // `count` now holds the number needed.
            groups = [gid_t](repeating: 0, count: Int(max(count, 1)))
            guard getgrouplist(name, primary, &groups, &count) != -1 else { return [] }
        }
        return Array(groups.prefix(Int(max(count, 0))))
    }
}
