/// Who is making the change the current request makes (SPEC §12), set once per request by the
/// control router (the caller's uid) and the household page (the signed-in owner, or the device),
/// and read by the engine when it records a rule change or a refusal. A task-local, so no engine
/// method needs a parameter for it; a change with none set was the helper's own.
public enum ChangeActor {
    @TaskLocal public static var current: String?

    // `describe(_ caller:)`, a control-socket caller's name, is the control server's (WireAnswers+Rules.swift).

    /// What a change made by the helper itself says (a configuration file change has its own).
    public static let helper = "the helper"
    public static let configurationFile = "the configuration file"
}
