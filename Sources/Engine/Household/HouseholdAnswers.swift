import Store

// What the household verbs answer, as the engine's own values (docs/architecture.md, Engine);
// a request for time is the stored `TimeRequest` itself.

/// An owner's adjustment (`adjust`, or an approved request): the change and the balance after it.
public struct CreditAdjustment: Hashable, Sendable {
    public var profile: String
    public var seconds: Int64
    public var note: String
    public var balanceSeconds: Int64
    /// Supportive, numbers-first words.
    public var message: String

    public init(profile: String, seconds: Int64, note: String, balanceSeconds: Int64, message: String) {
        self.profile = profile
        self.seconds = seconds
        self.note = note
        self.balanceSeconds = balanceSeconds
        self.message = message
    }
}

/// An owner's answer to a request for time: the request as answered, and for an approval the
/// adjustment it wrote.
public struct AnsweredTimeRequest: Hashable, Sendable {
    public var request: TimeRequest
    public var adjustment: CreditAdjustment?
    public var message: String

    public init(request: TimeRequest, adjustment: CreditAdjustment?, message: String) {
        self.request = request
        self.adjustment = adjustment
        self.message = message
    }
}
