import Foundation
import ScrollOffCore

/// A rule change in `events` (SPEC §12): what changed, who changed it, the rule in words.
public struct RuleChangeInfo: Hashable, Sendable, Codable {
    /// `block`, `unblock`, `blockRenewed`, `scheduleAdded`, `scheduleEdited`, `scheduleRemoved`,
    /// `focusStarted`, `focusEnded`, `listAdded`, `listRemoved`, `profileAdded`, `profileRemoved`,
    /// `profileClients`, `profileHousehold`, `timeZone`, `preset`, `knobs`.
    public var change: String
    /// "alice (uid 1000)", "web owner bob (uid 1001)", "the configuration file", "the helper".
    public var actor: String
    public var rule: String
    public var before: String?
    public var entries: [String]

    public init(change: String, actor: String, rule: String, before: String?, entries: [String]) {
        self.change = change
        self.actor = actor
        self.rule = rule
        self.before = before
        self.entries = entries
    }
}

/// A refused bypass or loosening in `events` (SPEC §12): the refusal as the person got it.
public struct RefusalInfo: Hashable, Sendable, Codable {
    /// The rule's wire name, as in the refusal the person saw (`curfew`, `cooldown`, …).
    public var rule: String
    public var subject: String?
    @WireOptionalTime public var opensAt: Instant?
    public var reason: String?
    public var message: String
    /// What was tried: `peek`, `use`, `token`, `unblock`, `schedule edit`, `schedule rm`, `lists rm`.
    public var action: String
    public var actor: String
    /// The curfew that refused it, for a curfew refusal.
    public var curfew: String?
    /// Attempts this row stands for; more than 1 when a burst was coalesced.
    public var count: Int
    @WireTime public var lastAt: Instant
    /// Attempts of other kinds counted here because the hour's rows were used up.
    public var folded: Int

    public init(rule: String, subject: String?, opensAt: Instant?, reason: String?, message: String, action: String, actor: String,
                curfew: String?, count: Int, lastAt: Instant, folded: Int) {
        self.rule = rule
        self.subject = subject
        self.opensAt = opensAt
        self.reason = reason
        self.message = message
        self.action = action
        self.actor = actor
        self.curfew = curfew
        self.count = count
        self.lastAt = lastAt
        self.folded = folded
    }

    enum CodingKeys: String, CodingKey {
        case rule, subject, reason, message, action, actor, curfew, count, folded
        case opensAt = "opens_at"
        case lastAt = "last_at"
    }
}

/// Any JSON value, for an event's machine-readable payload in `export --json`.
public enum JSONValue: Hashable, Sendable, Codable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// Parses JSON text; nil when it is not JSON.
    public init?(text: String) {
        guard let value = try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)) else { return nil }
        self = value
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null } else if let b = try? c.decode(Bool.self) { self = .bool(b) } else if let n = try? c.decode(Double.self) {
            self = .number(n)
        } else if let s = try? c.decode(String.self) { self = .string(s) } else if let a = try? c.decode([JSONValue].self) {
            self = .array(a)
        } else {
            self = .object(try c.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .null: try c.encodeNil()
        case .bool(let b): try c.encode(b)
        case .number(let n):
            // Whole numbers (milliseconds, seconds, counts) stay integers on the wire.
            if n.rounded() == n, abs(n) < 9.0e15 { try c.encode(Int64(n)) } else { try c.encode(n) }
        case .string(let s): try c.encode(s)
        case .array(let a): try c.encode(a)
        case .object(let o): try c.encode(o)
        }
    }
}

/// One row of `export --json` (SPEC §12): a ledger row or an event, typed.
public struct ExportRowReport: Hashable, Sendable, Codable {
    /// `ledger` or `event`.
    public var record: String
    public var id: Int64
    /// RFC 3339 in UTC with milliseconds, as the CSV's `time_utc`: `2026-11-21T23:40:17.123Z`.
    public var time: String
    /// The same instant in milliseconds since 1970.
    public var timeMs: Int64
    public var profile: String?
    /// Ledger rows: `earn`, `spend`, `bypassFree`, …
    public var reason: String?
    /// Events: `urge`, `ruleChange`, `bypassRefused`, …
    public var kind: String?
    public var deltaSeconds: Int64?
    public var entry: String?
    public var clientIP: String?
    /// The ledger note or the event's message.
    public var text: String?
    /// The event's details as JSON (a refusal, a rule change, a grant, …).
    public var payload: JSONValue?

    public init(record: String, id: Int64, time: String, timeMs: Int64, profile: String?, reason: String?, kind: String?,
                deltaSeconds: Int64?, entry: String?, clientIP: String?, text: String?, payload: JSONValue?) {
        self.record = record
        self.id = id
        self.time = time
        self.timeMs = timeMs
        self.profile = profile
        self.reason = reason
        self.kind = kind
        self.deltaSeconds = deltaSeconds
        self.entry = entry
        self.clientIP = clientIP
        self.text = text
        self.payload = payload
    }

    enum CodingKeys: String, CodingKey {
        case record, id, time, profile, reason, kind, entry, text, payload
        case timeMs = "time_ms"
        case deltaSeconds = "delta_seconds"
        case clientIP = "client_ip"
    }
}

/// `GET /v1/export/rows`: `scrolloff export --json`.
public struct ExportRowsResponse: Hashable, Sendable, Codable {
    public var format = "json"
    public var rows: [ExportRowReport]

    public init(rows: [ExportRowReport]) { self.rows = rows }
}
