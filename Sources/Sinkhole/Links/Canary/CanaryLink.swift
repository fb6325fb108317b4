import DNSWire
import DomainLists

/// The canary names of SPEC §9, and the optional list of known DoH endpoints.
///
/// - `use-application-dns.net` → NXDOMAIN: Firefox then keeps its DoH off (Mozilla's canary domain).
/// - `mask.icloud.com`, `mask-h2.icloud.com` → NXDOMAIN: iCloud Private Relay steps aside.
/// - `resolver.arpa` and `_dns.resolver.arpa` → NODATA: no designated encrypted resolver is
///   offered (RFC 9462 §4). A DDR client asks `_dns.resolver.arpa` SVCB; forwarded, the
///   upstream's own answer would name its DoH and DoT endpoints, and a device would move to
///   them, past every rule here.
/// - DoH endpoints from a list → the blocked answer, so browsers fall back to this resolver.
/// - `doctor-probe.scrolloff.invalid` → the blocked answer, never forwarded: what `scrolloff doctor`
///   asks when nothing is blocked, so it can check the blocked answer on any machine at any hour.
public struct CanaryLink: ResolverLink {
    /// `.invalid` is reserved and never resolves anywhere (RFC 6761 §6.4), so answering it here
    /// cannot shadow a real name, and a resolver that forwarded it would get NXDOMAIN, not this.
    public static let doctorProbeName = "doctor-probe.scrolloff.invalid"
    static let doctorProbeWire: [UInt8] = (try? DNSName(doctorProbeName).wireBytes) ?? []

    /// Every canary name, in text: hosts mode never writes these (SPEC §10), since a client reads
    /// a local answer for them as "this network wants DoH / Private Relay off" only from DNS.
    public static let canaryNames: [String] = nxdomainText + nodataText
    static let nxdomainText = ["use-application-dns.net", "mask.icloud.com", "mask-h2.icloud.com"]
    static let nodataText = ["resolver.arpa", "_dns.resolver.arpa"]
    /// Canaries answer exactly the name; their subdomains are ordinary names.
    static let nxdomainNames: [[UInt8]] = nxdomainText.compactMap { try? DNSName($0).wireBytes }
    static let nodataNames: [[UInt8]] = nodataText.compactMap { try? DNSName($0).wireBytes }
    /// Negative answers for canaries may be cached a while by clients: they never change.
    static let canaryTTL: UInt32 = 300

    /// Known DoH endpoints and their subdomains, in the same matcher the blocklists use.
    public let dohEndpoints: DomainMatcher
    /// Whether any endpoint is listed: most helpers run without the list, and then no query pays
    /// for a lookup.
    let hasDoHEndpoints: Bool
    /// Mode and TTL of the blocked answer for DoH endpoints, swappable by a reload.
    public let blocking: BlockingSettingsStore
    /// Bit n is set when a canary or the probe name is n octets long in wire form. A name of no
    /// such length (nearly every name) is compared with none of them: walking the static lists
    /// retained and released each of their arrays per query (bench/reply.sh).
    let specialLengths: UInt64 = (Self.nxdomainNames + Self.nodataNames + [Self.doctorProbeWire]).reduce(0) { mask, name in
        name.count < 64 ? mask | 1 << UInt64(name.count) : mask
    }

    public init(dohEndpoints: DomainMatcher? = nil, blocking: BlockingSettingsStore = BlockingSettingsStore()) {
        self.dohEndpoints = dohEndpoints ?? MatcherBuilder().build()
        hasDoHEndpoints = dohEndpoints != nil
        self.blocking = blocking
    }


    public func handle(_ context: QueryContext, next: ResolverNext) -> Resolution {
        let name = context.query.lowercasedName
        // A name of 64 octets or more may equal a special name the mask leaves out: compare it.
        if name.count >= 64 || specialLengths & 1 << UInt64(name.count) != 0,
           let resolution = answerSpecial(name, context) {
            return resolution
        }
        if hasDoHEndpoints, name.withUnsafeBytes({ dohEndpoints.match(wire: $0).isBlocked }) {
            // A known DoH endpoint is a blocked name for the metrics, like any other (SPEC §9).
            context.route = .blocked
            let settings = blocking.current
            LocalAnswer.writeBlocked(
                into: &context.builder, query: context.query, mode: settings.mode, ttl: settings.blockedTTL,
                limit: context.replyLimit)
            return .builtReply
        }
        return next(context)
    }

    /// The answer for a canary or the probe name, or nil for any other name.
    private func answerSpecial(_ name: [UInt8], _ context: QueryContext) -> Resolution? {
        for canary in Self.nxdomainNames where canary == name {
            LocalAnswer.writeNegative(
                into: &context.builder, query: context.query, rcode: .nameError, ttl: Self.canaryTTL, limit: context.replyLimit)
            return .builtReply
        }
        for canary in Self.nodataNames where canary == name {
            LocalAnswer.writeNegative(
                into: &context.builder, query: context.query, rcode: .noError, ttl: Self.canaryTTL, limit: context.replyLimit)
            return .builtReply
        }
        if name == Self.doctorProbeWire {
            // TTL 0: each doctor run must reach the sinkhole itself, not a cache on the way.
            LocalAnswer.writeBlocked(
                into: &context.builder, query: context.query, mode: blocking.current.mode, ttl: 0, limit: context.replyLimit)
            return .builtReply
        }
        return nil
    }
}
