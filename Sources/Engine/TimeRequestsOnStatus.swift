import ControlAPI
import ScrollOffCore
import Store

// `status` (HelperEngine+Reports) still answers the wire's `StatusReport`, which carries the
// member's recent requests for time as `TimeRequestInfo`. Until status is a domain value too,
// this is the one place the engine makes that wire type; the household verbs answer
// `TimeRequest` (HelperEngine+Household), and the control server maps those at the edge.

extension TimeRequestInfo {
    init(_ r: TimeRequest) {
        self.init(id: r.id, profile: r.profile, seconds: r.seconds, note: r.note, status: Status(rawValue: r.status.rawValue) ?? .pending,
                  createdAt: r.created, answeredAt: r.answeredAt, answeredBy: r.answeredBy, answerNote: r.answerNote)
    }
}

extension HelperEngine {
    /// `recentTimeRequests(profile:now:)` as status's wire field wants it.
    func recentTimeRequests(profile: String, now: Instant) -> [TimeRequestInfo] {
        (recentTimeRequests(profile: profile, now: now) as [TimeRequest]).map(TimeRequestInfo.init)
    }
}
