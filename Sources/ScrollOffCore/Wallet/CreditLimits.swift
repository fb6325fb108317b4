/// The lengths of time the credit and household verbs accept (SPEC §4, §9a), written once: the
/// engine checks them, and the control API declares its wire bounds from them
/// (`AdjustmentBounds`, `TimeRequestBounds`, `SpendLimitBounds`), so a request the wire admits
/// is one the rules admit.
public enum CreditLimits {
    /// An owner grants or takes at most a day at once, so a typo such as `+100h` is refused
    /// rather than written into the ledger; 0 changes nothing and is refused too.
    public static let adjustmentSeconds: ClosedRange<Int64> = -86_400...86_400
    /// A member asks for 1 min to a day.
    public static let requestSeconds: ClosedRange<Int64> = 60...86_400
    /// A spend's longest run (`use --for`): 1 s to a day. Without a limit a spend runs until
    /// stopped or the credit runs out, which a day of credit cannot outlast either.
    public static let spendLimitSeconds: ClosedRange<Int64> = 1...86_400

    /// Within a day either way and not 0.
    public static func allowsAdjustment(_ seconds: Int64) -> Bool {
        adjustmentSeconds.contains(seconds) && seconds != 0
    }
}
