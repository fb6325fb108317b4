import Foundation
import ScrollOffCore

/// The one JSON dialect of the control API: snake_case keys (spelled out in each type's
/// `CodingKeys`, so the contract is visible in the source), RFC 3339 UTC timestamps in whole
/// seconds, sorted keys so `--json` output diffs cleanly.
///
/// Timestamps are rounded **up** to the whole second, never down. Most times on the wire are
/// "opens at" / "locked until" / "open until" values (SPEC §13), and a script that waits until
/// `opens_at` and retries must not be refused again for the up to 999 ms a truncated second would
/// hide. A rounded-up `now` or event time is at most 999 ms late, which no reader acts on.
/// Decoding also accepts fractional seconds, so other clients may send them.
public enum ControlJSON {
    public static func encoder(pretty: Bool = false) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(wireText(date))
        }
        encoder.outputFormatting = pretty ? [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    public static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = date(fromWire: text) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "'\(text)' is not an RFC 3339 timestamp such as 2026-11-21T21:42:00Z")
            }
            return date
        }
        return decoder
    }

    /// The RFC 3339 text for `date`: UTC, the whole second at or after it (see the type's note).
    public static func wireText(_ date: Date) -> String {
        wholeSecondStyle.format(wireSecond(date))
    }

    /// `date` rounded up to the whole second: the instant the wire text names.
    public static func wireSecond(_ date: Date) -> Date {
        let ms = Instant(date: date).millisecondsSince1970
        // Integer division truncates toward zero, which is already "up" for negative values.
        let seconds = ms / 1000 + (ms % 1000 > 0 ? 1 : 0)
        return Instant(secondsSince1970: seconds).date
    }

    /// Parses an RFC 3339 timestamp with or without fractional seconds.
    /// Fields outside the calendar (`2026-02-30`, `T25:00`) are refused, not rolled over.
    public static func date(fromWire text: String) -> Date? {
        guard RFC3339Fields.areValid(text) else { return nil }
        return (try? wholeSecondStyle.parse(text)) ?? (try? fractionalStyle.parse(text))
    }

    private static let wholeSecondStyle = Date.ISO8601FormatStyle()
    private static let fractionalStyle = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    /// Encodes a value the API defines; these types encode without failing, so a failure here is
    /// a programming error reported as an internal error body rather than a crash.
    public static func encode(_ value: some Encodable, pretty: Bool = false) -> Data {
        do {
            return try encoder(pretty: pretty).encode(value)
        } catch {
            let fallback = ControlErrorEnvelope(error: ControlError(
                code: ControlErrorCode.internalError, message: "could not encode the answer: \(error)"
            ))
            return (try? encoder().encode(fallback)) ?? Data(#"{"error":{"code":"internal","message":"encoding failed","opens_at":null,"reason":null,"rule":null}}"#.utf8)
        }
    }

    /// Says which field was wrong and why, in words a person can act on, with the field named as
    /// it is spelled on the wire (`lists[0].url`).
    public static func describe(_ error: DecodingError) -> String {
        func path(_ codingPath: [any CodingKey], _ last: (any CodingKey)? = nil) -> String {
            let keys = codingPath + (last.map { [$0] } ?? [])
            return keys.map { key in key.intValue.map { "[\($0)]" } ?? ".\(key.stringValue)" }
                .joined().trimmingCharacters(in: CharacterSet(charactersIn: "."))
                .replacingOccurrences(of: ".[", with: "[")
        }
        switch error {
        case .keyNotFound(let key, let context):
            return "the field '\(path(context.codingPath, key))' is missing"
        case .typeMismatch(let type, let context):
            return "the field '\(path(context.codingPath))' must be \(typeName(type))"
        case .valueNotFound(let type, let context):
            return "the field '\(path(context.codingPath))' must be \(typeName(type)), not null"
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty { return "the body is not valid JSON (\(context.debugDescription))" }
            return "the field '\(path(context.codingPath))' is invalid: \(context.debugDescription)"
        @unknown default:
            return "the body does not match the expected fields (\(error))"
        }
    }

    private static func typeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: return "a string"
        case is Bool.Type: return "true or false"
        case is Int.Type, is Int64.Type, is Int32.Type, is UInt.Type: return "an integer"
        case is Double.Type: return "a number"
        case is Date.Type: return "an RFC 3339 timestamp"
        default:
            let name = String(describing: type)
            if name.hasPrefix("Array") { return "a list" }
            if name.hasPrefix("Dictionary") { return "an object" }
            return "a \(name)"
        }
    }
}

/// A request body the helper decodes strictly: unknown fields are refused, so a typo such as
/// `nmae` fails loudly instead of being silently ignored.
public protocol ControlRequestBody: Codable, Sendable {
    /// Every key this body may carry, as spelled on the wire.
    static var fieldNames: [String] { get }
}
