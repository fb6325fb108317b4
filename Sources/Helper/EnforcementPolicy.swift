import DNSWire
import Sinkhole
import Synchronization

/// The DNS side of the state engine: answers the sinkhole's "is this name blocked for this client
/// now, and for how long" from one published `Enforcement` (SPEC §9), and counts urges on managed
/// entries (SPEC §7). Only blocked queries on managed entries are recorded; allowed queries are
/// never logged or counted (SPEC §9 privacy).
///
/// Immutable: the engine publishes a new one at every change (`PolicyComposer`), so a query reads
/// no lock of its own; the matcher, snapshot and routing it uses always belong together.
struct EnforcementPolicy: QueryPolicy {
    let enforcement: Enforcement
    let engine: HelperEngine

    func decide(lowercasedName: [UInt8], type: DNSType, client: ClientAddress) -> PolicyDecision {
        let now = enforcement.now()
        let decision = lowercasedName.withUnsafeBytes { Helper.decide(enforcement, wire: $0, client: client, now: now) }
        // The snapshot's timeline runs out: ask the engine for a new one (SPEC §3 "fails closed").
        if enforcement.claimRebuild(at: now) { engine.wakeForRebuild() }
        if decision.blocked {
            if decision.managed { engine.recordUrge(decision, enforcement: enforcement, client: client, now: now) }
            return .blocked(ttlCap: decision.ttlCap)
        }
        return decision.managed ? .managed(ttlCap: decision.ttlCap) : .allowed
    }
}

/// The engine's rules combined with the diagnostic lists of `--blocklist`/`--managed-list`: the
/// stricter answer wins (`PolicyDecision.combined`).
struct CombinedPolicy: QueryPolicy {
    let engine: EnforcementPolicy
    let diagnostic: any QueryPolicy

    func decide(lowercasedName: [UInt8], type: DNSType, client: ClientAddress) -> PolicyDecision {
        engine.decide(lowercasedName: lowercasedName, type: type, client: client)
            .combined(with: diagnostic.decide(lowercasedName: lowercasedName, type: type, client: client))
    }
}

/// Builds the one policy the resolver chain reads per query from the engine's latest enforcement
/// and the diagnostic lists' latest policy, whenever either changes. Composing here, off the hot
/// path, keeps every query to a single reference read of the chain's `PolicyStore`.
final class PolicyComposer: Sendable {
    private struct Parts: Sendable {
        var enforcement: Enforcement?
        var diagnostic: any QueryPolicy
    }

    private let target: PolicyStore
    private let engine: HelperEngine
    private let parts: Mutex<Parts>

    init(target: PolicyStore, engine: HelperEngine, diagnostic: any QueryPolicy) {
        self.target = target
        self.engine = engine
        parts = Mutex(Parts(enforcement: nil, diagnostic: diagnostic))
    }

    func enforcementPublished(_ enforcement: Enforcement) { compose { $0.enforcement = enforcement } }
    func diagnosticReplaced(_ policy: any QueryPolicy) { compose { $0.diagnostic = policy } }

    private func compose(_ change: (inout Parts) -> Void) {
        // Replacing under this lock keeps an older composition from overwriting a newer one when
        // the engine and a reload publish at the same moment. The target's lock never calls out.
        parts.withLock { parts in
            change(&parts)
            guard let enforcement = parts.enforcement else { return }
            let rules = EnforcementPolicy(enforcement: enforcement, engine: engine)
            target.replace(with: parts.diagnostic is AllowAllPolicy
                ? rules : CombinedPolicy(engine: rules, diagnostic: parts.diagnostic))
        }
    }
}
