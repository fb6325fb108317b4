/// A point on the trusted timeline, in whole milliseconds since 1970-01-01T00:00:00Z.
///
/// Integer milliseconds keep every rule exact (no floating-point drift in ledgers or window edges)
/// and are fine enough for the 250 ms enforcement bound of SPEC §4.
/// Instants come only from the trusted clock (SPEC §11); nothing in this module reads a clock.
public struct Instant: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    public var millisecondsSince1970: Int64

    @inlinable public init(millisecondsSince1970: Int64) { self.millisecondsSince1970 = millisecondsSince1970 }
    @inlinable public init(secondsSince1970: Int64) { self.millisecondsSince1970 = secondsSince1970 &* 1000 }

    /// Whole seconds, rounded toward negative infinity so that ordering is kept.
    @inlinable public var secondsSince1970: Int64 {
        millisecondsSince1970 >= 0 ? millisecondsSince1970 / 1000 : (millisecondsSince1970 - 999) / 1000
    }

    @inlinable public static func < (a: Instant, b: Instant) -> Bool { a.millisecondsSince1970 < b.millisecondsSince1970 }
    @inlinable public static func + (a: Instant, d: Span) -> Instant { Instant(millisecondsSince1970: a.millisecondsSince1970 + d.milliseconds) }
    @inlinable public static func - (a: Instant, d: Span) -> Instant { Instant(millisecondsSince1970: a.millisecondsSince1970 - d.milliseconds) }
    @inlinable public static func - (a: Instant, b: Instant) -> Span { Span(milliseconds: a.millisecondsSince1970 - b.millisecondsSince1970) }

    public var description: String { "Instant(\(millisecondsSince1970) ms)" }
}

/// A signed length of time in whole milliseconds. Named `Span` to stay clear of `Swift.Duration`,
/// which is tied to the concurrency clocks this module must not read.
public struct Span: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    public var milliseconds: Int64

    @inlinable public init(milliseconds: Int64) { self.milliseconds = milliseconds }
    @inlinable public static func seconds(_ s: Int64) -> Span { Span(milliseconds: s &* 1000) }
    @inlinable public static func minutes(_ m: Int64) -> Span { Span(milliseconds: m &* 60_000) }
    @inlinable public static func hours(_ h: Int64) -> Span { Span(milliseconds: h &* 3_600_000) }
    public static let zero = Span(milliseconds: 0)

    /// Whole seconds, truncated toward zero.
    @inlinable public var wholeSeconds: Int64 { milliseconds / 1000 }

    @inlinable public static func < (a: Span, b: Span) -> Bool { a.milliseconds < b.milliseconds }
    @inlinable public static func + (a: Span, b: Span) -> Span { Span(milliseconds: a.milliseconds + b.milliseconds) }
    @inlinable public static func - (a: Span, b: Span) -> Span { Span(milliseconds: a.milliseconds - b.milliseconds) }
    @inlinable public static func * (a: Span, k: Int64) -> Span { Span(milliseconds: a.milliseconds * k) }

    public var description: String { "\(milliseconds) ms" }
}

/// The stable identifier of an entry: a curated service id (`instagram`) or a custom domain
/// (`news.example.com`), always lowercased (SPEC §1).
public struct EntryID: Hashable, Comparable, Sendable, Codable, ExpressibleByStringLiteral, CustomStringConvertible {
    public let rawValue: String
    public init(_ rawValue: String) { self.rawValue = rawValue.lowercased() }
    public init(stringLiteral value: String) { self.init(value) }
    public static func < (a: EntryID, b: EntryID) -> Bool { a.rawValue < b.rawValue }
    public var description: String { rawValue }
}
