import DNSWire
import NIOCore

/// Replays a stored answer (`AnswerParts`) for one client: its ID, its spelling of the name, its RD and CD bits,
/// TTLs counted down and capped by the rules, an OPT record if it sent one, fitted to its size.
enum AnswerRenderer {
    enum Output {
        /// The answer, replayed into the scratch buffer.
        case scratch
        /// A local reply (SERVFAIL for a malformed stored answer) in the builder.
        case builder
        /// The blocked answer in the builder: the CNAME chain ran through a blocked name (SPEC §9).
        /// Counted as blocked in the metrics, not as cached or forwarded.
        case blocked
    }

    /// Renders into the context's buffers: the hot path of a cache hit, allocation-free once warm.
    static func render(
        _ answer: CachedAnswer, query: DNSQuery, limit: Int, decision: PolicyDecision, policy: any QueryPolicy,
        client: ClientAddress, blocking: BlockingSettings, now: UInt64, scratch: inout [UInt8], builder: inout DNSResponseBuilder
    ) -> Output {
        render(
            answer.parts, query: query, limit: limit, decision: decision, policy: policy, client: client, blocking: blocking,
            now: now, scratch: &scratch, builder: &builder)
    }

    /// Renders `answer` into the context's buffers. `scratch` doubles as the buffer each CNAME
    /// target is decided from before the reply is written into it, so nothing is allocated.
    static func render(
        _ answer: AnswerParts, query: DNSQuery, limit: Int, decision: PolicyDecision, policy: any QueryPolicy,
        client: ClientAddress, blocking: BlockingSettings, now: UInt64, scratch: inout [UInt8], builder: inout DNSResponseBuilder
    ) -> Output {
        // SPEC §9 CNAME inspection: if the chain runs through a blocked name, the whole answer is
        // blocked; a managed name on the way caps the TTLs like the question's own name would.
        var effective = decision
        answer.forEachCNAMETarget { target in
            scratch.removeAll(keepingCapacity: true)
            scratch.append(contentsOf: target)
            effective = effective.combined(with: policy.decide(lowercasedName: scratch, type: query.type, client: client))
        }
        if effective.isBlocked {
            LocalAnswer.writeBlocked(
                into: &builder, query: query, mode: blocking.mode, ttl: blocking.ttl(cap: effective.ttlCap), limit: limit)
            return .blocked
        }

        let wire = answer.wire
        guard wire.count >= 12, answer.questionEnd >= 12 + answer.nameLength, answer.questionEnd <= wire.count else {
            LocalAnswer.writeEmpty(into: &builder, query: query, rcode: .serverFailure, limit: limit)
            return .builder
        }
        let optLength = query.edns == nil ? 0 : 11
        // RFC 1035 §4.2.1 and RFC 2181 §9: drop the additional section first (no TC needed), then
        // everything but the question (TC set, the client retries over TCP).
        var end = wire.count
        var truncated = false
        if end + optLength > limit {
            end = answer.additionalStart
            if end + optLength > limit {
                end = answer.questionEnd
                truncated = true
            }
        }
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: wire[0..<end])

        patchU16(&scratch, at: 0, query.header.id)
        var flags = WireLayout.u16(wire, at: 2) & ~0x0310  // TC, RD and CD come from this exchange
        if query.header.recursionDesired { flags |= 0x0100 }
        if query.header.checkingDisabled { flags |= 0x0010 }
        if truncated { flags |= 0x0200 }
        patchU16(&scratch, at: 2, flags)
        if query.name.count == answer.nameLength {
            for index in 0..<answer.nameLength { scratch[12 + index] = query.name[index] }
        }

        let elapsed = now > answer.receivedAt ? UInt32(clamping: (now - answer.receivedAt) / 1_000_000_000) : 0
        let cap = effective.ttlCap ?? UInt32.max
        for offset in answer.ttlOffsets where Int(offset) + 4 <= end {
            let stored = WireLayout.u32(wire, at: Int(offset))
            let left = min(stored > elapsed ? stored - elapsed : 0, cap)
            patchU32(&scratch, at: Int(offset), left)
        }

        var additional = WireLayout.u16(wire, at: 10)
        if truncated {
            patchU16(&scratch, at: 6, 0)
            patchU16(&scratch, at: 8, 0)
            additional = 0
        } else if end < wire.count {
            additional = 0
        }
        if let edns = query.edns {
            // OPT (RFC 6891 §6.1.2): root owner, our payload size, version 0, DO echoed.
            scratch.append(contentsOf: [0, 0, 41])
            scratch.append(UInt8(DNSServerLimits.ednsPayloadSize >> 8))
            scratch.append(UInt8(DNSServerLimits.ednsPayloadSize & 0xFF))
            scratch.append(contentsOf: [0, 0, edns.dnssecOK ? 0x80 : 0, 0, 0, 0])
            additional &+= 1
        }
        patchU16(&scratch, at: 10, additional)
        return .scratch
    }


    /// Renders into fresh buffers, for an answer that arrives after the context moved on.
    static func renderDetached(
        _ answer: CachedAnswer, for pending: PendingQuestion, client: ClientAddress, policy: any QueryPolicy,
        blocking: BlockingSettings
    ) -> LaterReply {
        var scratch: [UInt8] = []
        var builder = DNSResponseBuilder(capacity: 512)
        let output = render(
            answer, query: pending.query, limit: pending.limit, decision: pending.decision, policy: policy,
            client: client, blocking: blocking, now: NIODeadline.now().uptimeNanoseconds, scratch: &scratch, builder: &builder)
        switch output {
        case .scratch: return LaterReply(scratch)
        case .builder: return LaterReply(builder.bytes)
        case .blocked: return LaterReply(builder.bytes, blocked: true)
        }
    }

    @inline(__always) static func patchU16(_ bytes: inout [UInt8], at offset: Int, _ value: UInt16) {
        bytes[offset] = UInt8(value >> 8)
        bytes[offset + 1] = UInt8(value & 0xFF)
    }

    @inline(__always) static func patchU32(_ bytes: inout [UInt8], at offset: Int, _ value: UInt32) {
        bytes[offset] = UInt8(value >> 24)
        bytes[offset + 1] = UInt8(value >> 16 & 0xFF)
        bytes[offset + 2] = UInt8(value >> 8 & 0xFF)
        bytes[offset + 3] = UInt8(value & 0xFF)
    }
}
