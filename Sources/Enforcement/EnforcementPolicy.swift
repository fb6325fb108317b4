import DNSWire
import LowPriority
import Sinkhole
import NIOConcurrencyHelpers

/// The DNS side of the state engine: answers the sinkhole's "is this name blocked for this client
/// now, and for how long" from one published `Enforcement` (SPEC §9), and counts urges on managed
/// entries (SPEC §7). Only blocked queries on managed entries are recorded; allowed queries are
/// never logged or counted (SPEC §9 privacy).
///
/// Immutable: the engine publishes a new one at every change (`PolicyComposer`), so a query reads
/// no lock of its own; the matcher, snapshot and routing it uses always belong together.
///
/// It holds the engine's urge recorder and wake target, not the engine: the engine is the target of
/// weak references (its timers, `WakeTarget`), and Swift counts references to such an object through
/// a side table, so every copy of a policy holding it took the runtime's slow retain and release
/// path, twice per query (`perf`: 0.7% of the loop's CPU at saturation, SPEC §9).
///
/// A class, not a struct: the chain holds the policy as `any QueryPolicy` and copies it from the
/// store into the query's context and on to the cache link's renderer; a copy of the struct
/// retained and released its three references each time (value witness copies and destroys were
/// 12% of the reply benchmark's CPU, SPEC §9), a copy of a reference retains one.
package final class EnforcementPolicy: QueryPolicy {
    let enforcement: Enforcement
    let urges: UrgeRecorder
    let wakeTarget: WakeTarget

    package init(enforcement: Enforcement, urges: UrgeRecorder, wakeTarget: WakeTarget) {
        self.enforcement = enforcement
        self.urges = urges
        self.wakeTarget = wakeTarget
    }

    package func decide(lowercasedName: [UInt8], type: DNSType, client: ClientAddress) -> PolicyDecision {
        let now = enforcement.now()
        let decision = lowercasedName.withUnsafeBytes { enforcement.decide(wire: $0, client: client, now: now) }
        // The snapshot's timeline runs out: ask the engine for a new one (SPEC §3 "fails closed").
        if enforcement.claimRebuild(at: now) { wakeTarget.wake() }
        if decision.blocked {
            // A query whose profile could not be told (answered by the strictest) is no one's urge.
            if decision.managed, decision.attributed {
                urges.record(set: decision.entrySet, client: client, profile: decision.profile, now: now, enforcement: enforcement)
            }
            return .blocked(ttlCap: decision.ttlCap)
        }
        return decision.managed ? .managed(ttlCap: decision.ttlCap) : .allowed
    }
}

/// Builds the one policy the resolver chain reads per query from the engine's latest enforcement,
/// whenever the engine publishes. Composing here, off the hot path, keeps every query to a single
/// reference read of the chain's `PolicyStore`. There is one decision path: no diagnostic lists.
package final class PolicyComposer: Sendable {
    private let target: PolicyStore
    private let urges: UrgeRecorder
    private let wakeTarget: WakeTarget
    private let published: NIOLockedValueBox<Void>

    package init(target: PolicyStore, urges: UrgeRecorder, wakeTarget: WakeTarget) {
        self.target = target
        self.urges = urges
        self.wakeTarget = wakeTarget
        published = NIOLockedValueBox(())
    }

    package func enforcementPublished(_ enforcement: Enforcement) {
        // Replacing under this lock keeps an older publication from overwriting a newer one when
        // two publish at the same moment. The target's lock never calls out.
        let replaced = published.withLockedValue { _ in target.replace(with: EnforcementPolicy(enforcement: enforcement, urges: urges, wakeTarget: wakeTarget)) }
        // The enforcement replaced is freed on the releaser thread once no query holds it, not
        // here on the engine nor on the event loop whose query drops it last (SPEC §9).
        if let old = (replaced as? EnforcementPolicy)?.enforcement, old !== enforcement { Retirement.shared.retire(old) }
    }
}

/// What the DNS path wakes when a snapshot's timeline runs out or an urge waits to be written:
/// the engine's timer. A protocol, so the decision does not depend on the engine that builds it.
package protocol Wakeable: AnyObject, Sendable {
    /// Runs the timer's work now (a snapshot to rebuild).
    func wake() async
    /// Plans the timer's next wake again without running its work now (an urge batch to write
    /// within `UrgeRecorder.flushDelay`).
    func replan() async
}

/// Lets the urge recorder, created before the engine exists, and the DNS path wake the engine's timer.
package final class WakeTarget: @unchecked Sendable {
    // @unchecked: written once in the engine's init before any urge can be recorded, read after.
    package weak var target: (any Wakeable)?

    package init() {}

    package func wake() {
        guard let target else { return }
        Task { await target.wake() }
    }

    package func replan() {
        guard let target else { return }
        Task { await target.replan() }
    }
}
