import Foundation
import ScrollOffCore

// Wire types of the household verbs: owners grant or take time (`adjust`), members ask
// for time (`ask`), owners answer (`requests approve|decline`).

/// `POST /v1/adjust`: an owner grants (positive) or takes (negative) credit, with a note that goes
/// into the ledger's `adjust` row.
public struct AdjustRequest: ControlRequestBody, Hashable {
    /// A day either way, not 0 (`AdjustmentBounds`).
    public var seconds: AdjustmentSeconds
    public var note: String

    public static let fieldNames = ["seconds", "note"]

    public init(seconds: AdjustmentSeconds, note: String) {
        self.seconds = seconds
        self.note = note
    }
}

/// The answer of `adjust`: the change and the balance after it.
public struct AdjustReport: Hashable, Sendable, Codable {
    public var profile: String
    public var seconds: Int64
    public var note: String
    public var balanceSeconds: Int64
    /// The ledger row written (SPEC §4: the balance is the sum of the ledger).
    public var ledgerID: Int64?
    public var message: String

    public init(profile: String, seconds: Int64, note: String, balanceSeconds: Int64, ledgerID: Int64?, message: String) {
        self.profile = profile
        self.seconds = seconds
        self.note = note
        self.balanceSeconds = balanceSeconds
        self.ledgerID = ledgerID
        self.message = message
    }

    enum CodingKeys: String, CodingKey {
        case profile, seconds, note, message
        case balanceSeconds = "balance_seconds"
        case ledgerID = "ledger_id"
    }
}

/// `POST /v1/requests`: a member asks for `seconds` of credit, saying why.
public struct TimeRequestBody: ControlRequestBody, Hashable {
    /// 1 min to a day (`TimeRequestBounds`).
    public var seconds: RequestedSeconds
    public var note: String

    public static let fieldNames = ["seconds", "note"]

    public init(seconds: RequestedSeconds, note: String) {
        self.seconds = seconds
        self.note = note
    }
}

/// `POST /v1/requests/{id}/approve` and `/decline`: an owner's answer, with an optional note.
public struct TimeRequestAnswerBody: ControlRequestBody, Hashable {
    public var note: String?

    public static let fieldNames = ["note"]

    public init(note: String? = nil) { self.note = note }
}

/// One request for time, as members and owners see it.
public struct TimeRequestInfo: Hashable, Sendable, Codable {
    /// `pending`, `approved` or `declined`.
    public enum Status: String, Hashable, Sendable, Codable, CaseIterable {
        case pending, approved, declined
    }

    public var id: Int64
    public var profile: String
    public var seconds: Int64
    public var note: String
    public var status: Status
    @WireTime public var createdAt: Instant
    @WireOptionalTime public var answeredAt: Instant?
    public var answeredBy: String?
    public var answerNote: String?

    public init(id: Int64, profile: String, seconds: Int64, note: String, status: Status, createdAt: Instant,
                answeredAt: Instant? = nil, answeredBy: String? = nil, answerNote: String? = nil) {
        self.id = id
        self.profile = profile
        self.seconds = seconds
        self.note = note
        self.status = status
        self.createdAt = createdAt
        self.answeredAt = answeredAt
        self.answeredBy = answeredBy
        self.answerNote = answerNote
    }

    enum CodingKeys: String, CodingKey {
        case id, profile, seconds, note, status
        case createdAt = "created_at"
        case answeredAt = "answered_at"
        case answeredBy = "answered_by"
        case answerNote = "answer_note"
    }
}

/// `GET /v1/requests`: the profile's requests (or every profile's, for `?all=true`), newest first.
public struct TimeRequestsResponse: Hashable, Sendable, Codable {
    public var requests: [TimeRequestInfo]
    @WireOptionalTime public var now: Instant?

    public init(requests: [TimeRequestInfo], now: Instant? = nil) {
        self.requests = requests
        self.now = now
    }
}

/// The answer of `POST /v1/requests/{id}/approve|decline`: the request as answered, and for an
/// approval the adjustment it wrote.
public struct TimeRequestAnswerReport: Hashable, Sendable, Codable {
    public var request: TimeRequestInfo
    public var adjustment: AdjustReport?
    public var message: String

    public init(request: TimeRequestInfo, adjustment: AdjustReport?, message: String) {
        self.request = request
        self.adjustment = adjustment
        self.message = message
    }
}
