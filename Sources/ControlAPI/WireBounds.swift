import Foundation
import ScrollOffCore

// Every number that crosses the control socket or the household page is decoded here into a value
// that cannot be out of its range (ARCHITECTURE principle 3): a length of time whose init refuses
// what its field does not allow, an id of a row, an instant in the years a calendar can show.
// Nothing behind the boundary does arithmetic on a number straight from the wire: one request
// with `{"seconds": -9223372036854775808}` once trapped `abs` and took the household's DNS down.
// They live in the contract module so the CLI checks the same ranges before it sends, and so the
// fuzz target (`ControlAPIFuzz`) links the very decoding the helper runs.

/// A value from a request outside what its field allows, or of the wrong type. The message names
/// the field, the allowed range and what was sent, so a person or a script can fix the request.
public struct WireRangeError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The field as spelled on the wire (`for_seconds`), or what the value is (`a plan id`).
    public var field: String
    /// The allowed values in words, numbers first: "between 1 and 86400 (1 s to a day)".
    public var allowed: String
    /// What was sent, shortened when long: `-9223372036854775808`, `"soon"`, `null`.
    public var sent: String
    /// What to send instead, when there is more to say than the range.
    public var hint: String?

    public init(field: String, allowed: String, sent: String, hint: String? = nil) {
        self.field = field
        self.allowed = allowed
        self.sent = sent
        self.hint = hint
    }

    public var description: String {
        "\(field) must be \(allowed); you sent \(sent)." + (hint.map { " \($0)" } ?? "")
    }

    /// A value as it is quoted back in a message: at most 40 characters, so a megabyte of digits
    /// is not echoed whole into an answer and a log.
    static func quoted(_ text: String) -> String {
        text.count <= 40 ? text : String(text.prefix(40)) + "… (\(text.utf8.count) bytes)"
    }
}

/// The allowed range of one kind of length of time on the wire, in whole seconds.
public protocol SecondsBounds: Sendable {
    static var range: ClosedRange<Int64> { get }
    /// Whether 0 is refused inside the range (an adjustment of 0 s changes nothing).
    static var excludesZero: Bool { get }
    /// The range in words after the numbers: "(1 min to a day)".
    static var words: String { get }
    /// What to send instead.
    static var hint: String { get }
}

extension SecondsBounds {
    public static var excludesZero: Bool { false }

    public static func contains(_ seconds: Int64) -> Bool {
        range.contains(seconds) && !(excludesZero && seconds == 0)
    }

    /// "between 60 and 86400 (1 min to a day)", "…, not 0".
    public static var allowed: String {
        "a whole number of seconds between \(range.lowerBound) and \(range.upperBound) \(words)" + (excludesZero ? ", not 0" : "")
    }
}

/// A length of time from a request, in whole seconds, inside `Bounds.range`. It cannot be made
/// outside it: the init throws, and decoding throws the same `WireRangeError` for a number out of
/// range, a number that is not a whole `Int64` (`1e308`, `2.5`), a string, `true` or `null`.
public struct BoundedSeconds<Bounds: SecondsBounds>: Hashable, Sendable, Codable, CustomStringConvertible {
    public let seconds: Int64

    public init(_ seconds: Int64, field: String = "seconds") throws(WireRangeError) {
        guard Bounds.contains(seconds) else {
            throw WireRangeError(field: field, allowed: Bounds.allowed, sent: "\(seconds)", hint: Bounds.hint)
        }
        self.seconds = seconds
    }

    /// A page's minutes field (`minutes=15`): digits only, at most what fits the range once
    /// multiplied, so `999999999999999999` minutes is refused before any `* 60`.
    public init(minutes text: String, field: String = "minutes", negative: Bool = false) throws(WireRangeError) {
        let limit = Bounds.range.upperBound / 60
        let allowed = "a whole number of minutes between 1 and \(limit)"
        guard !text.isEmpty, text.utf8.count <= 19, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let minutes = Int64(text),
              (1...limit).contains(minutes)
        else {
            throw WireRangeError(field: field, allowed: allowed, sent: text.isEmpty ? "nothing" : WireRangeError.quoted(text))
        }
        // In range, so `minutes * 60` cannot overflow; the bounds themselves decide the rest.
        try self.init(negative ? -minutes * 60 : minutes * 60, field: field)
    }

    /// The same length as a `Span`; exact, since the range is far inside what milliseconds hold.
    public var span: Span { Span(milliseconds: seconds * 1000) }

    public var description: String { "\(seconds) s" }

    public init(from decoder: any Decoder) throws {
        let field = decoder.codingPath.last.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue } ?? "seconds"
        let container = try decoder.singleValueContainer()
        let refuse = { (sent: String) in WireRangeError(field: field, allowed: Bounds.allowed, sent: sent, hint: Bounds.hint) }
        if let whole = try? container.decode(Int64.self) {
            try self.init(whole, field: field)
            return
        }
        throw refuse(Self.describeOther(container))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(seconds)
    }

    /// What a value that is not a whole `Int64` was, in words: `1e+308`, `2.5`, `"soon"`, `null`.
    static func describeOther(_ container: any SingleValueDecodingContainer) -> String {
        if container.decodeNil() { return "null" }
        if let number = try? container.decode(Double.self) {
            // Integral numbers up to 10^21 print in full, as they were most likely written.
            if number.isFinite, number == number.rounded(), abs(number) < 1e21 { return String(format: "%.0f", number) }
            return "\(number)"
        }
        if let text = try? container.decode(String.self) { return "the string \"\(WireRangeError.quoted(text))\"" }
        if let flag = try? container.decode(Bool.self) { return "\(flag)" }
        return "a list or an object"
    }
}

// MARK: The lengths of time of the control API

/// `POST /v1/adjust`: an owner grants or takes at most a day at once (SPEC §9a), so a typo such as
/// `+100h` is refused rather than written into the ledger.
public enum AdjustmentBounds: SecondsBounds {
    public static let range: ClosedRange<Int64> = CreditLimits.adjustmentSeconds
    public static let excludesZero = true
    public static let words = "(a day either way)"
    public static let hint = "Send a positive number to grant, a negative one to take, such as 900 for +15 min."
}
public typealias AdjustmentSeconds = BoundedSeconds<AdjustmentBounds>

/// `POST /v1/requests`: a member asks for 1 min to a day.
public enum TimeRequestBounds: SecondsBounds {
    public static let range: ClosedRange<Int64> = CreditLimits.requestSeconds
    public static let words = "(1 min to a day)"
    public static let hint = "Ask for time in seconds, such as 900 for 15 min."
}
public typealias RequestedSeconds = BoundedSeconds<TimeRequestBounds>

/// `use --for` (SPEC §4): a spend's longest run, 1 s to a day. Without it a spend runs until
/// stopped or the credit runs out, which a day of credit cannot outlast either.
public enum SpendLimitBounds: SecondsBounds {
    public static let range: ClosedRange<Int64> = CreditLimits.spendLimitSeconds
    public static let words = "(1 s to a day)"
    public static let hint = "Leave for_seconds out to spend until you stop or the credit runs out."
}
public typealias SpendLimitSeconds = BoundedSeconds<SpendLimitBounds>

/// `focus` (SPEC §2): 1 s to 7 days. A focus session cannot be ended early, so a typo (`45d` for
/// `45m`) would lock a profile for weeks; 7 days is also the longest cooldown a preset may set.
public enum FocusBounds: SecondsBounds {
    public static let range: ClosedRange<Int64> = 1...604_800
    public static let words = "(1 s to 7 days)"
    public static let hint = "Send the length in seconds, such as 2700 for 45 min."
}
public typealias FocusSeconds = BoundedSeconds<FocusBounds>

// MARK: Ids in paths and forms

/// The id of a stored row (a plan, a request for time) in a path segment or a form: SQLite's
/// rowids are 1 to `Int64.max`, written in decimal digits.
public enum WireID {
    /// - Parameters:
    ///   - what: "a plan id", for the message.
    ///   - listing: where the person finds the ids: "`scrolloff plan list`".
    public static func parse(_ text: String?, what: String, listing: String) throws(WireRangeError) -> Int64 {
        let text = text ?? ""
        guard !text.isEmpty, text.utf8.count <= 19, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let id = Int64(text), id >= 1 else {
            throw WireRangeError(field: what, allowed: "a whole number between 1 and \(Int64.max)", sent: text.isEmpty ? "nothing" : WireRangeError.quoted(text),
                                 hint: "\(listing) shows the ids.")
        }
        return id
    }
}

// MARK: Times in queries

/// `?since=`: an RFC 3339 time in the years a calendar shows (1970 to 9999), so the instant fits
/// an `Instant` and the date arithmetic behind it.
public enum WireTimeQuery {
    public static let earliest = Instant(secondsSince1970: 0)
    /// 9999-12-31T23:59:59Z.
    public static let latest = Instant(secondsSince1970: 253_402_300_799)

    /// nil for a missing or empty value (no bound).
    public static func parse(_ text: String?, field: String) throws(WireRangeError) -> Instant? {
        guard let text, !text.isEmpty else { return nil }
        let allowed = "an RFC 3339 time between 1970-01-01T00:00:00Z and 9999-12-31T23:59:59Z, such as 2026-11-21T18:00:00Z"
        // The formatters' own limits are not part of this contract: anything longer than the
        // longest such time with fractions and an offset is refused before they see it.
        guard text.utf8.count <= 40, RFC3339Fields.areValid(text),
              let date = ControlJSON.date(fromWire: text) ?? ISO8601DateFormatter().date(from: text),
              date.timeIntervalSince1970.isFinite else {
            throw WireRangeError(field: field, allowed: allowed, sent: WireRangeError.quoted(text))
        }
        let seconds = date.timeIntervalSince1970
        guard seconds >= Double(earliest.secondsSince1970), seconds <= Double(latest.secondsSince1970) else {
            throw WireRangeError(field: field, allowed: allowed, sent: WireRangeError.quoted(text))
        }
        return Instant(date: date)
    }
}

// MARK: Query strings and forms

/// An `application/x-www-form-urlencoded` text: a request's query, or a page's form body
/// (HTML §4.10.21.7): pairs split at `&`, `+` is a space, then percent-decoding. A name given
/// twice keeps its first value: neither the CLI nor the page's forms repeat one, and the checks
/// and the handler must read the same value.
public enum URLEncodedFields {
    public static func parse<Text: StringProtocol>(_ text: Text) -> [String: String] {
        var values: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = decode(kv[0])
            if values[key] == nil { values[key] = kv.count == 2 ? decode(kv[1]) : "" }
        }
        return values
    }

    private static func decode(_ text: some StringProtocol) -> String {
        let spaced = String(text).replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }
}

// MARK: Text

/// The length and characters of every text a request carries, checked while a body or a form is
/// decoded (`ControlBodyDecoding`, the page's `WebForm`), before anything is stored. Without it a
/// reason or a note was bounded only by the 64 KiB body limit, and a megabyte of reasons went into
/// the database, every event that names it, the log and the page.
public enum WireText {
    /// A person's own words — a reason, a note, a plan, an alternative, a task: at most this many
    /// characters, as a household note always was (the page's inputs say 200 for room to spare).
    public static let longestWords = PersonWords.longest
    /// Any other text — a name, an entry, a time, a list's URL: at most this many bytes (2,048 is
    /// the longest URL the common browsers and servers take; a domain name is at most 253).
    public static let longestOther = 2048
    /// A list in a body (`entries`, `clients`): at most this many items.
    public static let mostItems = 1000
    /// The fields that hold a person's words, as spelled on the wire and in the page's forms.
    public static let wordsFields: Set<String> = ["reason", "note", "text", "when", "then", "task"]

    /// Refuses `text` of `field` when it is too long or carries a control character (a newline in
    /// a reason would forge a line in the log and in `scrolloff events`).
    public static func check(field: String, _ text: String) throws(WireRangeError) {
        if wordsFields.contains(field) {
            let count = text.count
            guard count <= longestWords else {
                throw WireRangeError(field: field, allowed: "at most \(longestWords) characters", sent: "\(count) characters",
                                     hint: "Say it in a sentence or two.")
            }
        } else {
            guard text.utf8.count <= longestOther else {
                throw WireRangeError(field: field, allowed: "at most \(longestOther) bytes", sent: "\(text.utf8.count) bytes")
            }
        }
        if let control = text.unicodeScalars.first(where: { $0.properties.generalCategory == .control }) {
            throw WireRangeError(field: field, allowed: "text without control characters (line breaks, tabs, escapes)",
                                 sent: String(format: "U+%04X", control.value), hint: "Write it on one line.")
        }
    }

    /// Checks every text in a decoded JSON value of `field`, in lists too, and the length of lists.
    static func check(field: String, json value: Any) throws(WireRangeError) {
        switch value {
        case let text as String:
            try check(field: field, text)
        case let items as [Any]:
            guard items.count <= mostItems else {
                throw WireRangeError(field: field, allowed: "a list of at most \(mostItems) items", sent: "\(items.count) items")
            }
            for item in items { try check(field: field, json: item) }
        case let object as [String: Any]:
            for (key, item) in object { try check(field: key, json: item) }
        default:
            return
        }
    }
}
