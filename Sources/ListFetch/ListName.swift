/// The name of a fetched list, used as its file name under `<state>/lists/`. Restricted so that
/// no name can climb out of that folder or clash with the store's own temporary files.
public struct ListName: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: String

    /// Accepts 1 to 64 characters of `a-z 0-9 . - _`, starting with a letter or digit; uppercase
    /// is folded to lowercase.
    public init(_ raw: String) throws(ListFetchError) {
        let lowered = raw.lowercased()
        guard (1...64).contains(lowered.utf8.count),
              let first = lowered.utf8.first, Self.isAlphanumeric(first),
              lowered.utf8.allSatisfy({ Self.isAlphanumeric($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") })
        else { throw .invalidListName(name: raw) }
        rawValue = lowered
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    public static func < (a: ListName, b: ListName) -> Bool { a.rawValue < b.rawValue }
    public var description: String { rawValue }

    public init(from decoder: any Decoder) throws {
        let raw = try decoder.singleValueContainer().decode(String.self)
        self = try ListName(raw)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
