// libFuzzer entry point for DNSWire (SPEC §9): any byte string must give a message or a typed
// error, and what the serializer writes must parse back to the same message. The same bytes also
// go through the TCP framer as a stream (FramerTarget.swift, SPEC §9).
import DNSWire

/// Called by libFuzzer once per input. A broken promise ends in `fatalError`, which libFuzzer
/// records as a crash with the input saved next to it.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    let input = UnsafeRawBufferPointer(start: data, count: size)
    checkInvariants(input)
    checkFramer(input)
    return 0
}

/// The promises the fuzzer checks, in the order the server relies on them.
func checkInvariants(_ packet: UnsafeRawBufferPointer) {
    // The gate and the fast path must be total too: they see every packet first.
    let decision = DNSQueryGate.decide(packet)
    var query = DNSQuery()
    let fastPathOK = (try? query.parse(packet)) != nil
    if fastPathOK { checkResponseBuilder(query: query) }

    let message: DNSMessage
    do {
        message = try DNSMessage(parsing: packet)
    } catch {
        return  // A typed error is a fine outcome for arbitrary bytes.
    }
    if message.questions.count == 1 {
        // Whatever the full parser accepts with one question, the fast path accepts and agrees on.
        guard fastPathOK else { fail("fast path rejected a message the full parser accepted", packet) }
        guard query.question == message.questions[0], query.optCount == (message.edns == nil ? 0 : 1),
            query.edns?.udpPayloadSize == message.edns?.udpPayloadSize,
            query.edns?.dnssecOK == message.edns?.dnssecOK, query.edns?.version == message.edns?.version
        else { fail("fast path and full parser disagree", packet) }
        if !message.header.isResponse, message.header.opcode == .query, decision != .proceed {
            fail("gate refused a well-formed query", packet)
        }
    }
    checkLayout(message, packet)

    for question in message.questions {
        // Presentation form must parse back to the same name, whatever octets it holds.
        guard (try? DNSName(question.name.description)) == question.name else {
            fail("presentation form of \(question.name) does not round-trip", packet)
        }
    }

    let written: [UInt8]
    do {
        written = try message.serialize()
    } catch .messageTooLarge {
        // Input may compress through octets we never point into (opaque RDATA); expanded, it can
        // outgrow 65535. That is a refusal, not a broken promise.
        return
    } catch {
        fail("serializer refused a parsed message: \(error)", packet)
    }
    guard let reparsed = try? DNSMessage(parsing: written) else {
        fail("serializer output does not parse", packet)
    }
    guard reparsed == message else { fail("round trip changed the message", packet) }
    // Our own output never points into a TTL or the header, so a cache can always patch it.
    guard (try? DNSMessageLayout(parsing: written)) != nil else { fail("layout refused serializer output", packet) }

    // Truncation to the 512-octet UDP limit keeps the question and sets TC when records go.
    guard let small = try? message.serialize(truncatingTo: 512),
        let smallMessage = try? DNSMessage(parsing: small)
    else { fail("truncated output does not parse", packet) }
    guard smallMessage.questions == message.questions else { fail("truncation lost the question", packet) }
    if small.count > 512, !(smallMessage.answers.isEmpty && smallMessage.authorities.isEmpty) {
        fail("truncated output over 512 octets still carries records", packet)
    }
    if written.count > 512, smallMessage.answers.count + smallMessage.authorities.count
        < message.answers.count + message.authorities.count, !smallMessage.header.truncated
    {
        fail("records dropped without TC", packet)
    }
}

/// The cache's byte-level view must agree with the parser, and patching must keep the reply valid.
func checkLayout(_ message: DNSMessage, _ packet: UnsafeRawBufferPointer) {
    let layout: DNSMessageLayout
    do {
        layout = try DNSMessageLayout(parsing: packet)
    } catch .pointerReadsTTL {
        return  // An honest refusal: the cache re-serializes such a reply instead of patching it.
    } catch {
        fail("layout refused what the parser accepted: \(error)", packet)
    }
    guard layout.ttlFields.count == message.answers.count + message.authorities.count + message.additionals.count
    else { fail("layout disagrees with the parser", packet) }
    var aged = Array(packet)
    layout.age(&aged, by: 30)
    layout.cap(&aged, at: 10)
    DNSMessageLayout.setID(message.header.id &+ 1, in: &aged)
    guard let agedMessage = try? DNSMessage(parsing: aged),
        agedMessage.answers.count == message.answers.count,
        agedMessage.authorities.count == message.authorities.count,
        agedMessage.additionals.count == message.additionals.count
    else { fail("aged reply does not parse into the same sections", packet) }
    var expected = message
    expected.header.id &+= 1
    for index in expected.answers.indices { expected.answers[index].ttl = agedMessage.answers[index].ttl }
    for index in expected.authorities.indices { expected.authorities[index].ttl = agedMessage.authorities[index].ttl }
    for index in expected.additionals.indices { expected.additionals[index].ttl = agedMessage.additionals[index].ttl }
    guard agedMessage == expected else { fail("patching TTLs or the ID changed more than TTLs and the ID", packet) }
    guard (agedMessage.answers + agedMessage.authorities + agedMessage.additionals).allSatisfy({ $0.ttl <= 10 })
    else { fail("a TTL is over the cap after patching", packet) }
}

/// A reply built for any query the fast path accepts must parse and echo the question.
func checkResponseBuilder(query: DNSQuery) {
    var builder = DNSResponseBuilder()
    builder.start(replyingTo: query, rcode: .noError)
    do {
        try builder.appendAnswerA(ttl: 10, .any)
        try builder.appendAnswerAAAA(ttl: 10, .any)
        let soa = SOAData(
            primaryNameServer: query.question.name, responsibleMailbox: .root, serial: 1, refresh: 2, retry: 3,
            expire: 4, minimum: 10)
        try builder.appendAuthority(DNSRecord(name: query.question.name, type: .soa, ttl: 10, rdata: .soa(soa)))
        try builder.finish(
            edns: query.edns == nil ? nil : EDNS(), extendedErrors: [ExtendedDNSError(infoCode: .blocked)],
            limit: query.udpReplyLimit())
    } catch {
        fatalError("response builder refused a reply to a parsed query: \(error)")
    }
    guard let reply = try? DNSMessage(parsing: builder.bytes) else {
        fatalError("built reply does not parse: \(builder.bytes)")
    }
    guard reply.header.id == query.header.id, reply.questions == [query.question] else {
        fatalError("built reply lost the ID or the question")
    }
    guard builder.bytes.count <= query.udpReplyLimit() else { fatalError("built reply exceeds the limit") }
}

func fail(_ reason: String, _ packet: UnsafeRawBufferPointer) -> Never {
    fatalError("\(reason); input: \(Array(packet).map { String($0, radix: 16) }.joined(separator: " "))")
}
