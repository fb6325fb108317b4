import DNSWire
import DomainLists
import NIOCore
import NIOEmbedded
@testable import Sinkhole

/// Builders for test packets and a chain runner over an embedded event loop.
enum Packet {
    static func query(
        _ name: String, _ type: DNSType = .a, id: UInt16 = 0x1234, edns: EDNS? = nil, class klass: DNSClass = .in
    ) throws -> [UInt8] {
        try DNSMessage(
            header: DNSHeader(id: id, recursionDesired: true),
            questions: [DNSQuestion(name: DNSName(name), type: type, class: klass)], edns: edns
        ).serialize()
    }

    static func parse(_ bytes: [UInt8]) throws -> DNSMessage {
        try DNSMessage(parsing: bytes)
    }

    /// Annotated hex: whitespace and `#` comments to the end of a line are ignored.
    static func hex(_ text: String) -> [UInt8] {
        var digits: [UInt8] = []
        for line in text.split(separator: "\n") {
            let code = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            digits += code.utf8.filter { !$0.isWhitespaceASCII }
        }
        var bytes: [UInt8] = []
        var index = 0
        while index + 1 < digits.count {
            bytes.append(UInt8(String(decoding: digits[index...index + 1], as: UTF8.self), radix: 16) ?? 0)
            index += 2
        }
        return bytes
    }
}

extension UInt8 {
    var isWhitespaceASCII: Bool { self == 0x20 || self == 0x09 || self == 0x0D }
}

/// Runs a chain on a packet the way the UDP handler does, and returns the reply bytes (nil: dropped).
final class ChainHarness {
    let loop = EmbeddedEventLoop()
    let context: QueryContext
    let chain: ResolverChain

    init(_ chain: ResolverChain) {
        self.chain = chain
        context = QueryContext(eventLoop: loop)
    }

    func run(_ packet: [UInt8], transport: DNSTransport = .udp, client: ClientAddress = .v4(0x7F00_0001)) throws -> [UInt8]? {
        context.transport = transport
        context.client = client
        context.decision = .allowed
        let resolution = packet.withUnsafeBytes { raw in
            context.packet = raw
            return chain.resolve(context)
        }
        switch resolution {
        case .drop: return nil
        case .builtReply: return context.builder.bytes
        case .scratchReply: return context.scratch
        case .later(let future):
            loop.run()
            return try future.wait().bytes
        case .upstream: return nil
        }
    }
}

/// A policy from a list of names, with an optional managed list and cap.
struct TablePolicy: QueryPolicy {
    var blocked: DomainMatcher
    var managed: DomainMatcher
    var managedCap: UInt32 = 30
    var blockedCap: UInt32 = 10

    init(blocked: [String], managed: [String] = [], managedCap: UInt32 = 30) throws {
        self.blocked = try suffixMatcher(blocked)
        self.managed = try suffixMatcher(managed)
        self.managedCap = managedCap
    }

    func decide(lowercasedName: [UInt8], type: DNSType, client: ClientAddress) -> PolicyDecision {
        if lowercasedName.withUnsafeBytes({ blocked.match(wire: $0).isBlocked }) { return .blocked(ttlCap: blockedCap) }
        if lowercasedName.withUnsafeBytes({ managed.match(wire: $0).isBlocked }) { return .managed(ttlCap: managedCap) }
        return .allowed
    }
}

/// A matcher of `names` and their subdomains (SPEC §1), as the DomainLists builder makes for lists.
func suffixMatcher(_ names: [String]) throws -> DomainMatcher {
    var builder = MatcherBuilder()
    for name in names { builder.add(try DomainName(name), entry: 0) }
    return builder.build()
}
