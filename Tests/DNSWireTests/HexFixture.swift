import DNSWire
import Foundation
import Testing

/// Annotated hex (ARCHITECTURE.md principle 10): pairs of hex digits, any whitespace, and `#`
/// comments to the end of the line, so a fixture reads like a packet dissection.
struct HexFixtureError: Error, CustomStringConvertible {
    var description: String
}

func hex(_ text: String) throws -> [UInt8] {
    var bytes: [UInt8] = []
    var pending: UInt8?
    for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
        let code = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        for character in code where !character.isWhitespace {
            guard let digit = character.hexDigitValue else {
                throw HexFixtureError(description: "'\(character)' is not a hex digit in line: \(line)")
            }
            if let high = pending {
                bytes.append(high << 4 | UInt8(digit))
                pending = nil
            } else {
                pending = UInt8(digit)
            }
        }
    }
    guard pending == nil else { throw HexFixtureError(description: "odd number of hex digits") }
    return bytes
}

/// Wire form of a presentation name, for building fixtures around long names.
func wire(_ name: String) throws -> [UInt8] { try DNSName(name).wireBytes }

/// A label of `length` copies of `byte`, with its length octet.
func label(_ length: Int, _ byte: UInt8 = UInt8(ascii: "a")) -> [UInt8] {
    [UInt8(length)] + Array(repeating: byte, count: length)
}

/// A 12-octet header: ID 0x1234, the given flags word and counts.
func header(flags: UInt16 = 0x0100, qd: UInt16 = 1, an: UInt16 = 0, ns: UInt16 = 0, ar: UInt16 = 0) -> [UInt8] {
    [0x12, 0x34] + [flags, qd, an, ns, ar].flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
}

func toHex(_ bytes: [UInt8]) -> String {
    bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
}

/// Parses, serializes and parses again, requiring the same message both times.
@discardableResult
func roundTrip(_ message: DNSMessage, sourceLocation: SourceLocation = #_sourceLocation) throws -> [UInt8] {
    let bytes = try message.serialize()
    let parsed = try DNSMessage(parsing: bytes)
    #expect(parsed == message, sourceLocation: sourceLocation)
    return bytes
}

@Test func hex_fixture_ignores_comments_and_whitespace() throws {
    #expect(try hex("12 34 # id\n  0a#x\nFF") == [0x12, 0x34, 0x0A, 0xFF])
    #expect(throws: HexFixtureError.self) { try hex("1") }
    #expect(throws: HexFixtureError.self) { try hex("zz") }
}

func readFile(_ path: String) throws -> [UInt8] {
    guard let data = FileManager.default.contents(atPath: path) else {
        throw HexFixtureError(description: "cannot read \(path)")
    }
    return [UInt8](data)
}
