import DNSWire

/// The question we send upstream, which is also the cache key's content: lowercased name, type,
/// class and the two bits that change an upstream's answer (DO, RFC 3225; CD, RFC 4035 §3.2.2).
public struct OutgoingQuestion: Hashable, Sendable {
    public var name: [UInt8]
    public var type: DNSType
    public var `class`: DNSClass
    public var dnssecOK: Bool
    public var checkingDisabled: Bool

    public init(name: [UInt8], type: DNSType, class: DNSClass, dnssecOK: Bool, checkingDisabled: Bool) {
        self.name = name
        self.type = type
        self.class = `class`
        self.dnssecOK = dnssecOK
        self.checkingDisabled = checkingDisabled
    }

    public init(_ query: DNSQuery) {
        self.init(
            name: query.lowercasedName, type: query.type, class: query.class,
            dnssecOK: query.edns?.dnssecOK ?? false, checkingDisabled: query.header.checkingDisabled)
    }
}

/// An upstream answer in the form the forwarder hands back and a deferred reply renders: wire
/// bytes with ID 0, the question lowercased and no OPT record, plus where the TTLs sit so a replay
/// can count them down without parsing (RFC 1035 §7.4: TTLs of cached records decrease). The cache
/// keeps a copy of its parts in its log (`AnswerLog`), not the object.
public final class CachedAnswer: Sendable {
    let parts: AnswerParts
    public let rcode: DNSRcode
    /// Seconds the answer may be cached before clamps: the smallest answer TTL for a positive
    /// answer, the SOA rule of RFC 2308 §5 for a negative one, 0 for what must not be cached.
    public let naturalLifetime: UInt32
    public let isNegative: Bool

    var wire: [UInt8] { parts.wire }
    /// Monotonic nanoseconds (`NIODeadline.uptimeNanoseconds`) when it arrived.
    var receivedAt: UInt64 { parts.receivedAt }
    /// An expired answer given again because every upstream failed (RFC 8767).
    public var isStale: Bool { parts.isStale }

    init(parts: AnswerParts, rcode: DNSRcode, naturalLifetime: UInt32, isNegative: Bool) {
        self.parts = parts
        self.rcode = rcode
        self.naturalLifetime = naturalLifetime
        self.isNegative = isNegative
    }

    /// This answer served stale at `now` (RFC 8767 §4): every TTL is `ttl`, counted down from `now`.
    func servedStale(ttl: UInt32, now: UInt64) -> CachedAnswer {
        var stale = parts
        for offset in stale.ttlOffsets where Int(offset) + 4 <= stale.wire.count {
            AnswerRenderer.patchU32(&stale.wire, at: Int(offset), ttl)
        }
        stale.receivedAt = now
        stale.isStale = true
        return CachedAnswer(parts: stale, rcode: rcode, naturalLifetime: ttl, isNegative: isNegative)
    }

    /// A reply with no records and `rcode`: SERVFAIL when no upstream answered.
    public static func failure(_ question: OutgoingQuestion, rcode: DNSRcode = .serverFailure, receivedAt: UInt64) -> CachedAnswer {
        var header = DNSHeader(id: 0, isResponse: true, recursionDesired: true, recursionAvailable: true)
        header.checkingDisabled = question.checkingDisabled
        let message = DNSMessage(
            header: header, rcode: rcode,
            questions: [DNSQuestion(name: (try? DNSName(wireBytes: question.name)) ?? .root, type: question.type, class: question.class)])
        let wire = (try? message.serialize()) ?? []
        let end = wire.count
        return CachedAnswer(
            parts: AnswerParts(
                wire: wire, ttlOffsets: [], cnameNames: [], nameLength: question.name.count, questionEnd: end,
                additionalStart: end, receivedAt: receivedAt, isStale: false),
            rcode: rcode, naturalLifetime: 0, isNegative: false)
    }

    /// Normalizes an upstream reply to `question`. Replies we cannot re-encode become SERVFAIL.
    public static func normalize(_ reply: DNSMessage, question: OutgoingQuestion, receivedAt: UInt64) -> CachedAnswer {
        // Extended RCODEs need the OPT record we strip; none of them is an answer worth replaying.
        guard reply.rcode.rawValue <= 15 else { return failure(question, receivedAt: receivedAt) }
        var message = reply
        message.header.id = 0
        message.header.isResponse = true
        message.header.authoritative = false
        message.header.truncated = false
        message.header.recursionAvailable = true
        message.header.checkingDisabled = question.checkingDisabled
        message.edns = nil
        guard let name = try? DNSName(wireBytes: question.name) else { return failure(question, receivedAt: receivedAt) }
        message.questions = [DNSQuestion(name: name, type: question.type, class: question.class)]

        let negative = reply.rcode == .nameError || (reply.rcode == .noError && reply.answers.isEmpty)
        var lifetime: UInt32 = 0
        if negative {
            // RFC 2308 §5: the negative TTL is min(SOA TTL, SOA MINIMUM); the SOA we replay carries it.
            for index in message.authorities.indices {
                guard case .soa(let soa) = message.authorities[index].rdata else { continue }
                let ttl = min(effectiveTTL(message.authorities[index].ttl), soa.minimum)
                message.authorities[index].ttl = ttl
                lifetime = max(lifetime, ttl)
            }
        } else if reply.rcode == .noError {
            lifetime = message.answers.map { effectiveTTL($0.ttl) }.min() ?? 0
        }
        var targets: [UInt8] = []
        for record in message.answers {
            if case .cname(let target) = record.rdata { targets.append(contentsOf: target.lowercased.wireBytes) }
        }

        guard let wire = try? message.serialize(), wire.count <= 65535 else { return failure(question, receivedAt: receivedAt) }
        guard let layout = WireLayout(wire) else { return failure(question, receivedAt: receivedAt) }
        return CachedAnswer(
            parts: AnswerParts(
                wire: wire, ttlOffsets: layout.ttlOffsets, cnameNames: targets, nameLength: question.name.count,
                questionEnd: layout.questionEnd, additionalStart: layout.additionalStart, receivedAt: receivedAt,
                isStale: false),
            rcode: reply.rcode, naturalLifetime: lifetime, isNegative: negative)
    }

    /// RFC 2181 §8: a TTL with the top bit set is to be treated as zero.
    static func effectiveTTL(_ ttl: UInt32) -> UInt32 { ttl & 0x8000_0000 != 0 ? 0 : ttl }
}

/// Offsets of the parts of a message we wrote ourselves, found by walking it once.
struct WireLayout {
    var questionEnd = 12
    var additionalStart = 12
    var ttlOffsets: [UInt16] = []

    /// Nil if the bytes are not a single-question message that parses (never for our own output).
    init?(_ wire: [UInt8]) {
        // At most 65,535 octets (RFC 1035 §4.2.2), so every offset fits 16 bits.
        guard wire.count >= 12, wire.count <= 65535 else { return nil }
        let qd = Int(Self.u16(wire, at: 4))
        let records = [Int(Self.u16(wire, at: 6)), Int(Self.u16(wire, at: 8)), Int(Self.u16(wire, at: 10))]
        guard qd == 1 else { return nil }
        var position = 12
        guard let afterName = Self.skipName(wire, from: position) else { return nil }
        position = afterName + 4
        guard position <= wire.count else { return nil }
        questionEnd = position
        for (section, count) in records.enumerated() {
            if section == 2 { additionalStart = position }
            for _ in 0..<count {
                guard let afterOwner = Self.skipName(wire, from: position), afterOwner + 10 <= wire.count else { return nil }
                ttlOffsets.append(UInt16(afterOwner + 4))
                let rdlength = Int(Self.u16(wire, at: afterOwner + 8))
                position = afterOwner + 10 + rdlength
                guard position <= wire.count else { return nil }
            }
        }
        if records[2] == 0 { additionalStart = position }
    }

    static func skipName(_ wire: [UInt8], from start: Int) -> Int? {
        var position = start
        while position < wire.count {
            let length = wire[position]
            if length == 0 { return position + 1 }
            if length & 0xC0 == 0xC0 { return position + 2 <= wire.count ? position + 2 : nil }
            position += 1 + Int(length)
        }
        return nil
    }

    static func u16(_ wire: [UInt8], at offset: Int) -> UInt16 {
        UInt16(wire[offset]) << 8 | UInt16(wire[offset + 1])
    }

    static func u32(_ wire: [UInt8], at offset: Int) -> UInt32 {
        UInt32(wire[offset]) << 24 | UInt32(wire[offset + 1]) << 16 | UInt32(wire[offset + 2]) << 8 | UInt32(wire[offset + 3])
    }
}

extension CachedAnswer {
    /// The A and AAAA addresses in the answer section, as text (for the firewall's DoH address set).
    public var addresses: [String] {
        guard let message = try? DNSMessage(parsing: wire) else { return [] }
        return message.answers.compactMap { record in
            switch record.rdata {
            case .a(let address): "\(address)"
            case .aaaa(let address): "\(address)"
            default: nil
            }
        }
    }
}
