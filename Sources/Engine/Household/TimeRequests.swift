import ScrollOffCore
import Store

/// Members' requests for time (SPEC §9a), oldest first; answered ones are kept as history
/// as long as the events that tell of them (`Store.retention`, 90 days), so the list never grows
/// without bound. The engine owns one; it commits every change before it makes it here.
struct TimeRequests {
    /// A request is for time now-ish ("15 minutes for homework"): after a day without an answer it
    /// has lost its point, and it would hold one of the profile's `pendingPerProfile` slots so the
    /// member could not ask again. It is then declined by the helper, with a note saying so, and
    /// the member sees that on their page.
    static let pendingLifetime: Span = .hours(24)
    /// Unanswered requests one profile may have at once, so a member cannot flood their owners.
    static let pendingPerProfile = 5
    /// Who "answered" an expired request, in `answered_by` and on the member's page.
    static let expiryAuthor = "scrolloff-dns"
    static let expiryNote = "No owner answered within 24 h; ask again if you still need the time."

    private(set) var all: [TimeRequest]

    init(_ requests: [TimeRequest]) { all = requests }

    /// When the oldest pending request expires, for the timer.
    var nextExpiry: Instant? {
        all.lazy.filter { $0.status == .pending }.map { $0.created + Self.pendingLifetime }.min()
    }

    /// The pending requests older than `pendingLifetime` at `now`.
    func expired(at now: Instant) -> [TimeRequest] {
        all.filter { $0.status == .pending && now >= $0.created + Self.pendingLifetime }
    }

    /// `profile`'s requests waiting for an answer.
    func pending(profile: String) -> [TimeRequest] {
        all.filter { $0.profile == profile && $0.status == .pending }
    }

    /// Newest first: one profile's, or every profile's for `nil`.
    func list(profile: String?) -> [TimeRequest] {
        all.filter { profile == nil || $0.profile == profile }.sorted { $0.id > $1.id }
    }

    /// What `status` shows a member: pending requests and those answered in the last 7 days, newest first.
    func recent(profile: String, now: Instant) -> [TimeRequest] {
        all.filter { r in
            r.profile == profile && (r.status == .pending || (r.answeredAt ?? r.created) >= now - .hours(24 * 7))
        }.sorted { $0.id > $1.id }
    }

    /// Request `id` when it still waits for its answer; a request is answered once.
    func answerable(id: Int64) throws(EngineError) -> TimeRequest {
        guard let request = all.first(where: { $0.id == id }) else {
            throw .notFound("There is no request \(id); `scrolloff requests` lists them.")
        }
        guard request.status == .pending else {
            let by = request.answeredBy.map { " by \($0)" } ?? ""
            throw .invalid("Request \(id) was already \(request.status.rawValue)\(by); a request is answered once.")
        }
        return request
    }

    /// The answer and its event for each of `due`, declined by the helper, for one commit.
    static func expiryChange(_ due: [TimeRequest], at now: Instant) -> StateChange {
        var change = StateChange()
        for request in due {
            change.append(.answerTimeRequest(id: request.id, status: .declined, at: now, by: expiryAuthor, note: expiryNote))
            change.append(.appendEvent(StoredEvent(
                profile: request.profile, time: now, kind: .timeRequestAnswered,
                message: "The request for \(SpanWords.describe(seconds: request.seconds)) expired: \(expiryNote)",
                payload: Household.payload(["request": "\(request.id)", "status": "expired"]))))
        }
        return change
    }

    mutating func add(_ request: TimeRequest) { all.append(request) }

    /// Records an answer that was committed; returns the request as it is now.
    @discardableResult
    mutating func answered(id: Int64, status: TimeRequest.Status, at now: Instant, by: String, note: String?) -> TimeRequest? {
        guard let k = all.firstIndex(where: { $0.id == id }) else { return nil }
        all[k].status = status
        all[k].answeredAt = now
        all[k].answeredBy = by
        all[k].answerNote = note
        return all[k]
    }

    /// The in-memory copy of what `StateStore.applyRetention` deleted: answered requests older
    /// than the retention.
    mutating func forgetRetained(now: Instant) {
        let cut = now - .hours(24 * Int64(Store.retention))
        all.removeAll { $0.status != .pending && ($0.answeredAt ?? $0.created) < cut }
    }

    mutating func remove(profile: String) { all.removeAll { $0.profile == profile } }
}
