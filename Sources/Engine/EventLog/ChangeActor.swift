import ControlAPI

/// Who is making the change the current request makes (SPEC §12), set once per request by the
/// control router (the caller's uid) and the household page (the signed-in owner, or the device),
/// and read by the engine when it records a rule change or a refusal. A task-local, so no engine
/// method needs a parameter for it; a change with none set was the helper's own.
public enum ChangeActor {
    @TaskLocal public static var current: String?

    /// "alice (uid 1000)", "root (uid 0)", or "uid 1234" for a uid without a name.
    public static func describe(_ caller: CallerIdentity) -> String {
        let name = GroupMembershipAuthorizer.name(of: caller)
        return name.hasPrefix("uid ") ? name : "\(name) (uid \(caller.uid))"
    }

    /// What a change made by the helper itself says (a configuration file change has its own).
    public static let helper = "the helper"
    public static let configurationFile = "the configuration file"
}
