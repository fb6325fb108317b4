#if canImport(Glibc)
import Glibc
#endif
import ControlAPI

/// Decides who may act on which profile (SPEC §11: "the caller's uid (SO_PEERCRED) decides which
/// profiles they may act on"). `owners` are the uids the profile lists (`HelperEngine.profileOwners()`);
/// empty means the profile names no owner.
public protocol ControlAuthorizer: Sendable {
    func decide(_ caller: CallerIdentity, profile: String, owners: [UInt32]) -> AuthorizationDecision
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
}

/// Root and the helper's own user (a helper started with `make run` serves the user who started
/// it) may act on every profile. Anyone else may act on a profile that lists their uid as an
/// owner, or on a profile with no owners when they are a member of group `scrolloff`; everyone
/// else is refused with a reason that says who may.
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

    public func decide(_ caller: CallerIdentity, profile: String, owners: [UInt32]) -> AuthorizationDecision {
        if caller.uid == 0 || caller.uid == helperUID { return .allowed }
        if !owners.isEmpty {
            if owners.contains(caller.uid) { return .allowed }
            let names = owners.map { uid in SystemGroups.userName(ofUID: uid).map { "'\($0)'" } ?? "uid \(uid)" }
            let who = SystemGroups.userName(ofUID: caller.uid).map { "user '\($0)' (uid \(caller.uid))" } ?? "uid \(caller.uid)"
            return .denied(reason: "\(who) may not act on profile '\(profile)': it belongs to \(names.joined(separator: ", ")). "
                + "Its owner or root can make the change, or pick your own profile with --profile NAME.")
        }
        let groupID = SystemGroups.groupID(named: groupName)
        if let groupID, caller.gid == groupID || SystemGroups.groups(ofUID: caller.uid, primary: caller.gid).contains(groupID) {
            return .allowed
        }
        let who = SystemGroups.userName(ofUID: caller.uid).map { "user '\($0)' (uid \(caller.uid))" } ?? "uid \(caller.uid)"
        let how = groupID == nil
            ? "This machine has no group '\(groupName)' yet: an administrator can create it with `sudo groupadd \(groupName)`"
            : "An administrator can add you with `sudo usermod -aG \(groupName) \(SystemGroups.userName(ofUID: caller.uid) ?? "USER")`, then log in again"
        return .denied(reason: "\(who) may not act on profile '\(profile)': only root and members of group '\(groupName)' may. \(how).")
    }

    public func mayManageProfiles(_ caller: CallerIdentity) -> AuthorizationDecision {
        ProfileAdministration.decide(caller, helperUID: helperUID)
    }
}

/// Thin wrappers over the reentrant group and password database calls.
enum SystemGroups {
    static func groupID(named name: String) -> UInt32? {
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

    /// The supplementary groups of the user with `uid`, from the group database.
    static func groups(ofUID uid: UInt32, primary: UInt32) -> [UInt32] {
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
