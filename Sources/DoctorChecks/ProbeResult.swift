import ControlAPI

/// What one DNS probe of `scrolloff doctor` got back, reduced to what the checks look at.
public enum ProbeResult: Sendable, Equatable {
    case answered(ProbeAnswer)
    /// No usable answer: the reason in words ("no answer within 2 s", "connection refused").
    case failed(String)
}

/// A reply to a probe.
public struct ProbeAnswer: Sendable, Equatable {
    /// `NOERROR`, `NXDOMAIN`, `REFUSED`, `SERVFAIL`…
    public var rcode: String
    /// The A and AAAA addresses of the answer section, as text.
    public var addresses: [String]
    /// Records in the answer section, any type (a CNAME chain counts).
    public var answerCount: Int
    /// From sending the query to reading the reply.
    public var milliseconds: Int

    public init(rcode: String, addresses: [String] = [], answerCount: Int? = nil, milliseconds: Int) {
        self.rcode = rcode
        self.addresses = addresses
        self.answerCount = answerCount ?? addresses.count
        self.milliseconds = milliseconds
    }

    /// `NOERROR 0.0.0.0`, `NXDOMAIN`.
    public var summary: String { ([rcode] + addresses.prefix(2)).joined(separator: " ") }
}
