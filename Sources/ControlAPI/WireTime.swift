import Foundation
import ScrollOffCore

/// An `Instant` written on the wire as an RFC 3339 timestamp (through `ControlJSON`'s date
/// strategy) rather than as `Instant`'s own `{"millisecondsSince1970": …}` object, so scripts
/// reading `--json` see `"locked_until": "2026-11-21T21:42:00Z"`.
@propertyWrapper
public struct WireTime: Hashable, Sendable, Codable {
    public var wrappedValue: Instant

    public init(wrappedValue: Instant) { self.wrappedValue = wrappedValue }

    public init(from decoder: any Decoder) throws {
        wrappedValue = Instant(date: try decoder.singleValueContainer().decode(Date.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(wrappedValue.date)
    }
}

/// An optional `Instant` on the wire: an RFC 3339 timestamp, or `null`. The key is always
/// written (SPEC §13: `locked_until` must exist even when nothing is locked).
@propertyWrapper
public struct WireOptionalTime: Hashable, Sendable, Codable {
    public var wrappedValue: Instant?

    public init(wrappedValue: Instant?) { self.wrappedValue = wrappedValue }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        wrappedValue = container.decodeNil() ? nil : Instant(date: try container.decode(Date.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let wrappedValue { try container.encode(wrappedValue.date) } else { try container.encodeNil() }
    }
}

extension KeyedDecodingContainer {
    /// A missing optional time reads as nil, as a plain optional would.
    public func decode(_ type: WireOptionalTime.Type, forKey key: Key) throws -> WireOptionalTime {
        try decodeIfPresent(type, forKey: key) ?? WireOptionalTime(wrappedValue: nil)
    }
}
