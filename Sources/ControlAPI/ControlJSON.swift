import Foundation

/// The one JSON dialect of the control API: snake_case keys (spelled out in each type's
/// `CodingKeys`, so the contract is visible in the source), RFC 3339 UTC timestamps, sorted keys
/// so `--json` output diffs cleanly.
public enum ControlJSON {
    public static func encoder(pretty: Bool = false) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = pretty ? [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    public static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }

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
