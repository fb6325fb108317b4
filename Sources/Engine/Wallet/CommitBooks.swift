import ScrollOffCore
import Store

/// What the next commit owes the store besides its command's own change (SPEC §3, §4,
/// §11): tamper events the trusted clock saw, wallets cut back to a corrected clock, and changes
/// already in force that a full or read-only disk refused. Also when the last commit succeeded
/// (a running spend's checkpoint counts from it) and how the writes are going (`CommitHealth`).
/// The engine owns one; `HelperEngine.commit` writes what it owes and clears it only when the
/// store has committed.
struct CommitBooks {
    /// Tamper events seen by the clock and not committed yet.
    private(set) var jumps: [ClockJump] = []
    /// Wallets cut back to a corrected trusted clock (SPEC §11 clock recovery), not committed yet.
    private(set) var rewinds: [(profile: String, outcome: CreditOutcome)] = []
    /// The trusted time of the last commit that succeeded.
    private(set) var lastCommitAt: Instant?
    /// Changes already in force that the disk refused: the start's bookkeeping (wallets resumed,
    /// starter credit, tamper events) and `stop`s, which only end charging. The held state includes
    /// them; the next commit that succeeds writes them first, in the same transaction (a full disk
    /// never takes DNS away nor keeps a spend charging).
    private(set) var held: StateChange?
    /// Failing state writes, for the log's back-off and `doctor`.
    var health = CommitHealth()

    mutating func noteJump(_ jump: ClockJump) { jumps.append(jump) }
    mutating func noteRewind(profile: String, _ outcome: CreditOutcome) { rewinds.append((profile, outcome)) }

    /// The rows of the wallets cut back since the last commit, for the profiles still there.
    func recordRewinds(into change: inout StateChange, profiles work: [ProfileRuntime]) {
        for rewind in rewinds {
            guard let i = work.firstIndex(where: { $0.name == rewind.profile }) else { continue }
            change.record(rewind.outcome, account: work[i].account.state, profile: rewind.profile)
        }
    }

    /// A jump back freezes earning in every profile until its local end of day (SPEC §11).
    static func freezeEarning(after jump: ClockJump, profiles work: inout [ProfileRuntime], into change: inout StateChange, at now: Instant) {
        for i in work.indices {
            guard let until = jump.earningFrozenUntil(in: work[i].calendar) else { continue }
            let out = work[i].account.freezeEarning(until: until, at: now)
            change.record(out, account: work[i].account.state, profile: work[i].name)
        }
    }

    /// What a commit of `change` writes: what is held first.
    func toWrite(_ change: StateChange) -> StateChange { Self.joined(held, change) }

    /// The store committed `toWrite(…)` at `now`: nothing is owed any more. Returns the receipt of
    /// the command's own rows.
    mutating func committed(_ receipt: CommitReceipt, at now: Instant) -> CommitReceipt {
        var receipt = receipt
        if let held { receipt = Self.receipt(receipt, dropping: held) }
        held = nil
        lastCommitAt = now
        jumps.removeAll()
        rewinds.removeAll()
        return receipt
    }

    /// Another helper committed first (a shared store): what this one held was decided on the old
    /// state and is dropped; the reloaded state is settled from where the other left it.
    mutating func dropHeld() {
        held = nil
        rewinds.removeAll()
    }

    /// The disk refused `change`, which holds anyway: it is written with the next commit. It
    /// already carries the tamper events and rewinds owed, which must not be written twice.
    mutating func hold(_ change: StateChange) {
        held = Self.joined(held, change)
        jumps.removeAll()
        rewinds.removeAll()
    }

    /// The change a commit writes: the held start-up bookkeeping (if a full disk refused it) first,
    /// then `change`, so ledger rows and account saves land in the order they happened.
    static func joined(_ held: StateChange?, _ change: StateChange) -> StateChange {
        guard let held else { return change }
        return StateChange(held.operations + change.operations)
    }

    /// `receipt` without the ids of the rows `held` appended: callers read the ids of their own rows.
    static func receipt(_ receipt: CommitReceipt, dropping held: StateChange) -> CommitReceipt {
        var ledger = 0, events = 0, plans = 0, alternatives = 0
        for op in held.operations {
            switch op {
            case .appendLedger: ledger += 1
            case .appendEvent: events += 1
            case .addPlan: plans += 1
            case .addAlternative: alternatives += 1
            default: break
            }
        }
        var out = receipt
        out.ledgerIDs = Array(receipt.ledgerIDs.dropFirst(ledger))
        out.eventIDs = Array(receipt.eventIDs.dropFirst(events))
        out.planIDs = Array(receipt.planIDs.dropFirst(plans))
        out.alternativeIDs = Array(receipt.alternativeIDs.dropFirst(alternatives))
        return out
    }
}
