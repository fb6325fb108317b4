import DNSWire
import Sinkhole

/// The DNS side of the state engine: answers the sinkhole's "is this name blocked for this client
/// now, and for how long" from the engine's published `Enforcement` (SPEC §9), and counts urges on
/// managed entries (SPEC §7). Only blocked queries on managed entries are recorded; allowed
/// queries are never logged or counted (SPEC §9 privacy).
struct EnforcementPolicy: QueryPolicy {
    let engine: HelperEngine

    func decide(lowercasedName: [UInt8], type: DNSType, client: ClientAddress) -> PolicyDecision {
        // One read of the box per query: the matcher, snapshot and routing used below all come from
        // the same published state, and the urge is recorded against that same state.
        let enforcement = engine.box.enforcement
        let now = enforcement.now()
        let ip = ClientIP(client)
        let decision = lowercasedName.withUnsafeBytes { Helper.decide(enforcement, wire: $0, client: ip, now: now) }
        if decision.blocked {
            if decision.managed { engine.recordUrge(decision, enforcement: enforcement, client: ip, now: now) }
            return .blocked(ttlCap: decision.ttlCap)
        }
        return decision.managed ? .managed(ttlCap: decision.ttlCap) : .allowed
    }
}

/// The engine's rules combined with the static diagnostic lists of `--blocklist`/`--managed-list`
/// (reloaded on SIGHUP): the stricter answer wins (`PolicyDecision.combined`).
struct CombinedPolicy: QueryPolicy {
    let engine: EnforcementPolicy
    let diagnostic: PolicyStore

    func decide(lowercasedName: [UInt8], type: DNSType, client: ClientAddress) -> PolicyDecision {
        engine.decide(lowercasedName: lowercasedName, type: type, client: client)
            .combined(with: diagnostic.policy.decide(lowercasedName: lowercasedName, type: type, client: client))
    }
}

extension ClientIP {
    /// The sinkhole's address form; both keep host byte order, so this is a plain switch.
    init(_ address: ClientAddress) {
        switch address {
        case .v4(let a): self = .v4(a)
        case .v6(let high, let low): self = .v6(high: high, low: low)
        case .unknown: self = .unknown
        }
    }
}
