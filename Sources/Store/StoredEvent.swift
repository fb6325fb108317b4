import Foundation
import ScrollOffCore

/// The kind column of the events table. Open-ended (a struct, not an enum) so a newer helper's
/// kinds still load in an older `events` listing; the known ones are named below.
public struct EventKind: RawRepresentable, Hashable, Sendable, Codable, ExpressibleByStringLiteral, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }
    public var description: String { rawValue }

    /// SPEC §7: blocked queries for one entry from one client, one per 60 s episode.
    public static let urge: EventKind = "urge"
    /// A weakening refused by a cooldown or the curfew edit lock (SPEC §2, §3).
    public static let editRefused: EventKind = "editRefused"
    /// SPEC §11: the system clock and the trusted clock came apart.
    public static let tamper: EventKind = "tamper"
    /// SPEC §4: earned credit above the daily cap was discarded.
    public static let capDiscard: EventKind = "capDiscard"
    /// SPEC §2: a curfew starts in 10 minutes.
    public static let curfewReminder: EventKind = "curfewReminder"
    public static let earned: EventKind = "earned"
    public static let expired: EventKind = "expired"
    public static let starterCredit: EventKind = "starterCredit"
    public static let adjusted: EventKind = "adjusted"
    public static let earmarked: EventKind = "earmarked"
    public static let earmarkReleased: EventKind = "earmarkReleased"
    public static let earningFrozen: EventKind = "earningFrozen"
    public static let grantOpened: EventKind = "grantOpened"
    public static let grantShortened: EventKind = "grantShortened"
    public static let grantEnded: EventKind = "grantEnded"
    public static let peekUsed: EventKind = "peekUsed"
    public static let tokenUsed: EventKind = "tokenUsed"
    public static let exercise: EventKind = "exercise"
    /// SPEC §4a: a day's allowance granted or changed, and what was left of it at midnight.
    public static let allowanceGranted: EventKind = "allowanceGranted"
    public static let allowanceReset: EventKind = "allowanceReset"
    /// SPEC §9b: the firewall caught DNS to another resolver, DNS over TLS or DoH by address.
    public static let bypassAttempt: EventKind = "bypassAttempt"
    /// SPEC §9a: a member asked for time; an owner answered.
    public static let timeRequested: EventKind = "timeRequested"
    public static let timeRequestAnswered: EventKind = "timeRequestAnswered"
}

/// One row of the events table (SPEC §7 insights, §11 tamper, §12 export).
public struct StoredEvent: Hashable, Sendable, Codable {
    /// Assigned by the store; nil on events not saved yet.
    public var id: Int64?
    /// Nil for machine-wide events (a tamper event concerns every profile).
    public var profile: String?
    public var time: Instant
    public var kind: EventKind
    public var entry: EntryID?
    /// The client that asked, for urges; nothing else records addresses (SPEC §9 privacy).
    public var clientIP: String?
    /// The sentence people saw, as it was worded at the time.
    public var message: String?
    /// Machine-readable details as JSON (the core's `Codable` values).
    public var payload: String?

    public init(id: Int64? = nil, profile: String?, time: Instant, kind: EventKind, entry: EntryID? = nil,
                clientIP: String? = nil, message: String? = nil, payload: String? = nil) {
        self.id = id
        self.profile = profile
        self.time = time
        self.kind = kind
        self.entry = entry
        self.clientIP = clientIP
        self.message = message
        self.payload = payload
    }

    /// A wallet or ladder event, with the core's `CreditEvent.Kind` as the JSON payload.
    public init(_ event: CreditEvent, profile: String) {
        self.init(profile: profile, time: event.time, kind: Self.kind(of: event.kind), entry: event.entry,
                  message: event.message, payload: JSONCoding.string(event.kind))
    }

    /// A tamper event (SPEC §11) with the jump as payload.
    public init(_ jump: ClockJump) {
        let minutes = abs(jump.offset.milliseconds) / 60_000
        let message: String
        switch jump.correction {
        case nil:
            message = "The system clock moved \(jump.direction == .forward ? "forward" : "back") by \(minutes) min; every rule keeps to the trusted clock."
        case .ntpSynchronised?:
            message = "The trusted clock was \(minutes) min ahead and moved back to the system clock, which NTP keeps synchronised; rules keep their times of day."
        case .rootReset?:
            message = "Root reset the trusted clock to the system clock (`scrolloff-dns clock reset`), moving it \(jump.direction == .forward ? "forward" : "back") by \(minutes) min."
        }
        self.init(profile: nil, time: jump.trusted, kind: .tamper, message: message, payload: JSONCoding.string(jump))
    }

    /// SPEC §2: the reminder 10 minutes before a curfew, stored when the helper emits it.
    public init(_ reminder: CurfewReminder, profile: String) {
        struct Payload: Encodable {
            var schedule: String
            var occurrence: Occurrence
            var entryCount: Int
            var strict: Bool
            var reason: String?
        }
        self.init(profile: profile, time: reminder.remindAt, kind: .curfewReminder, message: reminder.message,
                  payload: JSONCoding.string(Payload(schedule: reminder.schedule, occurrence: reminder.occurrence,
                                                     entryCount: reminder.entryCount, strict: reminder.strict, reason: reminder.reason)))
    }

    /// A weakening refused by a cooldown or an edit lock (SPEC §2, §3), with the refusal as payload,
    /// so insights can count how often the rules held.
    public init(refused refusal: Refusal, profile: String, at time: Instant) {
        self.init(profile: profile, time: time, kind: .editRefused, entry: nil, message: refusal.message,
                  payload: JSONCoding.string(refusal))
    }

    static func kind(of kind: CreditEvent.Kind) -> EventKind {
        switch kind {
        case .earned: .earned
        case .dailyCapReached: .capDiscard
        case .expired: .expired
        case .starterCredit: .starterCredit
        case .adjusted: .adjusted
        case .earmarked: .earmarked
        case .earmarkReleased: .earmarkReleased
        case .earningFrozen: .earningFrozen
        case .grantOpened: .grantOpened
        case .grantShortened: .grantShortened
        case .grantEnded: .grantEnded
        case .peekUsed: .peekUsed
        case .tokenUsed: .tokenUsed
        case .exercise: .exercise
        case .allowanceGranted: .allowanceGranted
        case .allowanceReset: .allowanceReset
        }
    }
}

/// Deterministic JSON for payload and list columns: sorted keys, so equal values store equal text.
enum JSONCoding {
    static func string<T: Encodable>(_ value: T) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding plain Codable values of the core cannot fail; an empty object keeps the row valid if it ever did.
        guard let data = try? encoder.encode(value) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }

    static func decode<T: Decodable>(_ type: T.Type, from text: String, table: String, column: String) throws(StoreError) -> T {
        do {
            return try JSONDecoder().decode(type, from: Data(text.utf8))
        } catch {
            throw .invalidRow(table: table, detail: "\(column) is not valid JSON for \(type): \(error)")
        }
    }
}
