import ControlAPI
import ScrollOffCore
import Store

/// How long the household's requests for time live (SPEC §9a): a request nobody answers expires
/// after `pendingRequestLifetime`, and an answered one is kept as long as the events that tell of
/// it (`Store.retention`, 90 days), so the table never grows without bound.
extension HelperEngine {
    /// A request is for time now-ish ("15 minutes for homework"): after a day without an answer it
    /// has lost its point, and it would hold one of the profile's `pendingRequestsPerProfile` slots
    /// so the member could not ask again. It is then declined by the helper, with a note saying so,
    /// and the member sees that on their page.
    public static let pendingRequestLifetime: Span = .hours(24)
    /// Who "answered" an expired request, in `answered_by` and on the member's page.
    public static let requestExpiryAuthor = "scrolloff-dns"
    static let requestExpiryNote = "No owner answered within 24 h; ask again if you still need the time."

    /// When the oldest pending request expires, for the timer (`nextDueInstant`).
    var nextRequestExpiry: Instant? {
        timeRequests.lazy.filter { $0.status == .pending }.map { $0.created + Self.pendingRequestLifetime }.min()
    }

    /// Declines, as the helper, every pending request older than `pendingRequestLifetime`: one
    /// answer row and one event each, in one commit. A failed write leaves them pending; the next
    /// tick tries again.
    func expireTimeRequestsIfDue(now: Instant) {
        let due = timeRequests.indices.filter { timeRequests[$0].status == .pending && now >= timeRequests[$0].created + Self.pendingRequestLifetime }
        guard !due.isEmpty else { return }
        var change = StateChange()
        for k in due {
            let request = timeRequests[k]
            change.append(.answerTimeRequest(id: request.id, status: .declined, at: now, by: Self.requestExpiryAuthor, note: Self.requestExpiryNote))
            change.append(.appendEvent(StoredEvent(
                profile: request.profile, time: now, kind: .timeRequestAnswered,
                message: "The request for \(SpanWords.describe(seconds: request.seconds)) expired: \(Self.requestExpiryNote)",
                payload: householdPayload(["request": "\(request.id)", "status": "expired"]))))
        }
        do {
            _ = try commitReturning(change, now: now)
        } catch {
            logger.warning("expired requests for time could not be written; the next wake tries again", metadata: ["error": "\(error)"])
            return
        }
        for k in due {
            timeRequests[k].status = .declined
            timeRequests[k].answeredAt = now
            timeRequests[k].answeredBy = Self.requestExpiryAuthor
            timeRequests[k].answerNote = Self.requestExpiryNote
        }
    }

    /// The in-memory copy of what `Store.applyRetention` deleted: answered requests older than
    /// the retention.
    func forgetRetainedTimeRequests(now: Instant) {
        let cut = now - .hours(24 * Int64(Store.retention))
        timeRequests.removeAll { $0.status != .pending && ($0.answeredAt ?? $0.created) < cut }
    }
}
