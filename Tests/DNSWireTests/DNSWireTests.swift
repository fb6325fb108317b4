import Testing
@testable import DNSWire

@Test func query_round_trips_through_serializer() throws {
    let name = try DNSName("Www.Example.com.")
    let message = DNSMessage(
        header: DNSHeader(id: 0x1234, recursionDesired: true),
        questions: [DNSQuestion(name: name, type: .a)],
        edns: EDNS(udpPayloadSize: 1232, dnssecOK: true))
    let bytes = try message.serialize()
    let parsed = try DNSMessage(parsing: bytes)
    #expect(parsed == message)
    #expect(parsed.questions.first?.name.description == "Www.Example.com")
    #expect(parsed.questions.first?.name.lowercasedPresentation == "www.example.com")
}
